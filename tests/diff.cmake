# Tests of analyze diff (analyze/diff/diff.c, render_diff.c, builtin-diff.c): the
# unit test on hand-built profiles (split, self, names, the noise test's
# error rates on synthetic runs, exact byte values, value types, exports),
# and the end-to-end test on report_split run with two splits.
add_executable(unit_diff ${CMAKE_CURRENT_SOURCE_DIR}/unit/diff_test.c
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/profile_builder.c)
target_include_directories(unit_diff PRIVATE ${CMAKE_BINARY_DIR}/formats/profile)
target_link_libraries(unit_diff PRIVATE ipscope_analyze)
add_test(NAME unit_diff COMMAND unit_diff)
set_tests_properties(unit_diff PROPERTIES LABELS unit TIMEOUT 300)

add_test(NAME e2e_diff COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/diff.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_diff PROPERTIES LABELS e2e TIMEOUT 300)
