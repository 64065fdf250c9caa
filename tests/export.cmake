# Tests of the exporters (formats/profile/export*.c, analyze export): the unit test on
# hand-built profiles, and end-to-end tests that run the real consumers (go
# tool pprof; the speedscope package's JSON schema, validated with ajv) on
# exports of a collected workload and compare their numbers with analyze flat.
add_executable(unit_export ${CMAKE_CURRENT_SOURCE_DIR}/unit/export_test.c
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/profile_builder.c)
# export_test.c unpacks pprof output with the generated protobuf-c code.
target_include_directories(unit_export PRIVATE ${CMAKE_BINARY_DIR}/formats/profile)
target_link_libraries(unit_export PRIVATE ipscope_profile)
add_test(NAME unit_export COMMAND unit_export)
set_tests_properties(unit_export PROPERTIES LABELS unit)

ipscope_workload(export_threads e2e/workloads/export_threads.cpp)
target_link_libraries(export_threads PRIVATE pthread)

# Fixtures: the npm consumers installed into the build directory, and the trace
# every step reads. A consumer that is not installed fails its test, naming the
# Debian package (scripts/debian-packages.txt): never a skip.
set(EXPORT_E2E ${CMAKE_CURRENT_SOURCE_DIR}/e2e/export_consumers.sh)
add_test(NAME e2e_export_setup_node
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/export_setup_node.sh ${CMAKE_BINARY_DIR}/tests/export-node)
set_tests_properties(e2e_export_setup_node PROPERTIES FIXTURES_SETUP export_node
  LABELS e2e TIMEOUT 300)
add_test(NAME e2e_export_collect COMMAND sh ${EXPORT_E2E} collect ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_export_collect PROPERTIES FIXTURES_SETUP export_trace
  LABELS e2e TIMEOUT 300)

foreach(step pprof speedscope folded stable output)
  add_test(NAME e2e_export_${step} COMMAND sh ${EXPORT_E2E} ${step} ${CMAKE_BINARY_DIR})
  set_tests_properties(e2e_export_${step} PROPERTIES FIXTURES_REQUIRED export_trace
    LABELS e2e TIMEOUT 300)
endforeach()
set_tests_properties(e2e_export_speedscope PROPERTIES FIXTURES_REQUIRED "export_trace;export_node")

# The remapping of one profile into another (formats/profile/remap.c): copy
# and by name, as filters, merges and diffs use it.
add_executable(unit_remap ${CMAKE_CURRENT_SOURCE_DIR}/unit/remap_test.c
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/profile_builder.c)
target_link_libraries(unit_remap PRIVATE ipscope_profile)
add_test(NAME unit_remap COMMAND unit_remap)
set_tests_properties(unit_remap PROPERTIES LABELS unit)
