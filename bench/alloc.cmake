# The malloc/free-heavy program of bench/alloc-overhead (its other workload
# is bench/binary_trees.lua on Debian's lua5.4).
add_executable(bench_alloc_workload ${CMAKE_CURRENT_SOURCE_DIR}/alloc_workload.c)
target_link_libraries(bench_alloc_workload PRIVATE pthread)
# bench/alloc-size's workload of many distinct stacks: every call a frame.
add_executable(bench_alloc_stacks ${CMAKE_CURRENT_SOURCE_DIR}/alloc_stacks.c)
target_compile_options(bench_alloc_stacks PRIVATE -O1 -fno-inline -fno-optimize-sibling-calls -fno-ipa-icf
  -fno-omit-frame-pointer)
# bench/alloc-size's breakdown of a trace's bytes by record type.
add_executable(bench_trace_bytes ${CMAKE_CURRENT_SOURCE_DIR}/trace_bytes.c)
target_link_libraries(bench_trace_bytes PRIVATE ipscope_trace)
