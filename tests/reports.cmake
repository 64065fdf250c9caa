# Tests of analyze's reports (analyze/builtin-{info,tree,flat}.c, calltree,
# filters, loader): unit tests on hand-built profiles, end-to-end scripts on
# workloads with known answers (tests/e2e/workloads/report_*.c), and the
# trace generator of bench/analyze-speed.
add_executable(unit_report ${CMAKE_CURRENT_SOURCE_DIR}/unit/report_test.c)
target_link_libraries(unit_report PRIVATE ipscope_analyze)
add_test(NAME unit_report COMMAND unit_report)
