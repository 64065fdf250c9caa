# bench/export-speed's trace generator: large synthetic traces over a real ELF.
add_executable(bench_export_tracegen ${CMAKE_CURRENT_SOURCE_DIR}/export_tracegen.c)
target_include_directories(bench_export_tracegen PRIVATE ${CMAKE_SOURCE_DIR}/formats)
target_link_libraries(bench_export_tracegen PRIVATE ipscope_formats PkgConfig::LIBELF)
