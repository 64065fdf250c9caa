# The synthetic trace generator of bench/analyze-speed and bench/export-speed:
# large traces whose stacks run through a real ELF's functions.
add_executable(bench_tracegen ${CMAKE_CURRENT_SOURCE_DIR}/tracegen.c)
target_link_libraries(bench_tracegen PRIVATE ipscope_trace PkgConfig::LIBELF)
