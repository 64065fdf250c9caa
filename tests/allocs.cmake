# allocs: end-to-end tests of collect --allocs and the allocation profile,
# on workloads whose sources state the answers (tests/e2e/workloads/alloc_*).
ipscope_workload(alloc_sites e2e/workloads/alloc_sites.cpp)
foreach(test sites)
  add_test(NAME e2e_alloc_${test} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/alloc_${test}.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(e2e_alloc_${test} PROPERTIES LABELS e2e TIMEOUT 180)
endforeach()
