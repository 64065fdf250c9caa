# The synthetic trace generator of bench/analyze-speed, bench/export-speed and
# bench/analyze-scale: large traces whose stacks run through a real ELF's
# functions. e2e_report_memory runs it too, so the tests build it when the
# benchmarks are off (tests/CMakeLists.txt includes this file first).
if(NOT TARGET bench_tracegen)
  add_executable(bench_tracegen ${CMAKE_SOURCE_DIR}/bench/tracegen.c)
  target_link_libraries(bench_tracegen PRIVATE ipscope_trace PkgConfig::LIBELF)
endif()
