# allocs: end-to-end tests of collect --allocs and the allocation profile,
# on workloads whose sources state the answers (tests/e2e/workloads/alloc_*).
ipscope_workload(alloc_sites e2e/workloads/alloc_sites.cpp)
# Generous timeouts: under ASan on a loaded 2-core machine e2e_alloc_sites took 117 s alone.
foreach(test sites sampled)
  add_test(NAME e2e_alloc_${test} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/alloc_${test}.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(e2e_alloc_${test} PROPERTIES LABELS e2e TIMEOUT 600)
endforeach()
ipscope_workload(alloc_cases e2e/workloads/alloc_cases.c)
target_link_libraries(alloc_cases PRIVATE pthread)
ipscope_workload(alloc_dlopen_signal e2e/workloads/alloc_dlopen_signal.c)
target_link_libraries(alloc_dlopen_signal PRIVATE dl)
ipscope_workload(alloc_spawn_signal e2e/workloads/alloc_spawn_signal.c)
target_link_libraries(alloc_spawn_signal PRIVATE pthread)
# The same program linked statically, where LD_PRELOAD cannot reach its allocator.
ipscope_workload(alloc_static e2e/workloads/alloc_cases.c)
target_link_options(alloc_static PRIVATE -static -pthread)
# A program whose malloc is its own (as one with jemalloc linked in): unreachable too.
ipscope_workload(alloc_own e2e/workloads/alloc_own.c)
# A process tree, every process allocating a known set (fork, posix_spawn, fork+exec, a pipeline).
ipscope_workload(alloc_tree e2e/workloads/alloc_tree.c)
# Whole runs against memcheck: allocations before main, a library dlopen'ed plainly and with
# RTLD_DEEPBIND (its constructor allocates, its destructor frees), threads in a fixed order.
ipscope_workload(alloc_exact e2e/workloads/alloc_exact.cpp)
target_link_libraries(alloc_exact PRIVATE pthread dl)
add_library(alloc_exact_lib SHARED e2e/workloads/alloc_exact_lib.c)
set_target_properties(alloc_exact_lib PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/workloads)
target_compile_options(alloc_exact_lib PRIVATE -O2 -g -fno-sanitize=all)
target_link_options(alloc_exact_lib PRIVATE -fno-sanitize=all)
add_library(alloc_api_lib SHARED e2e/workloads/alloc_api_lib.c)
set_target_properties(alloc_api_lib PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/workloads)
target_compile_options(alloc_api_lib PRIVATE -O2 -g -fno-sanitize=all)
target_link_options(alloc_api_lib PRIVATE -fno-sanitize=all)
add_dependencies(alloc_exact alloc_exact_lib alloc_api_lib)
# (Under ASan on a machine at load 45-60: e2e_alloc_cases 141 s, e2e_alloc_tree 93 s.)
foreach(test cases tree exact)
  add_test(NAME e2e_alloc_${test} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/alloc_${test}.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(e2e_alloc_${test} PROPERTIES LABELS e2e TIMEOUT 600)
endforeach()
