# Tests of analyze's reports (analyze/builtin-{info,tree,flat}.c, calltree,
# filters, loader): unit tests on hand-built profiles, end-to-end scripts on
# workloads with known answers (tests/e2e/workloads/report_*.c).
add_executable(unit_report ${CMAKE_CURRENT_SOURCE_DIR}/unit/report_test.c
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/profile_builder.c)
target_link_libraries(unit_report PRIVATE ipscope_analyze)
add_test(NAME unit_report COMMAND unit_report)
set_tests_properties(unit_report PROPERTIES LABELS unit)
add_executable(unit_jitmap ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_jitmap.c)
target_link_libraries(unit_jitmap PRIVATE ipscope_analyze)
add_test(NAME unit_jitmap COMMAND unit_jitmap)
set_tests_properties(unit_jitmap PROPERTIES LABELS unit)

ipscope_workload(report_split e2e/workloads/report_split.c)
ipscope_workload(peak_rss e2e/workloads/peak_rss.c) # e2e_report_memory
ipscope_workload(report_recursive e2e/workloads/report_recursive.c)
ipscope_workload(report_inline e2e/workloads/report_inline.c)
ipscope_workload(report_jit e2e/workloads/report_jit.c)
ipscope_workload(report_names_only e2e/workloads/report_names_only.cpp)
foreach(test split stripped recursive inline cli symbols values pager programs memory merge names_only)
  add_test(NAME e2e_report_${test}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/report_${test}.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(e2e_report_${test} PROPERTIES LABELS e2e TIMEOUT 300)
endforeach()

# The values model on a hand-built profile with two value types (count and
# bytes) and on signed (diff) values: every report and exporter shows the
# chosen type with its unit.
add_executable(unit_values ${CMAKE_CURRENT_SOURCE_DIR}/unit/values_test.c
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/profile_builder.c)
target_include_directories(unit_values PRIVATE ${CMAKE_BINARY_DIR}/formats/profile)
target_link_libraries(unit_values PRIVATE ipscope_analyze)
add_test(NAME unit_values COMMAND unit_values)
set_tests_properties(unit_values PROPERTIES LABELS unit)

# The loader on traces written by the trace writer (or by hand): value
# types, epochs, undefined and empty stacks, unknown records, truncation,
# and the figures a trace cannot truthfully hold.
add_executable(unit_load ${CMAKE_CURRENT_SOURCE_DIR}/unit/load_test.c
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/trace_test_support.c)
target_include_directories(unit_load PRIVATE ${CMAKE_SOURCE_DIR}/formats/trace)
target_link_libraries(unit_load PRIVATE ipscope_analyze)
add_test(NAME unit_load COMMAND unit_load)
set_tests_properties(unit_load PROPERTIES LABELS unit)

# The allocation consumer's table of live blocks against a plain array:
# recent identities, the hash part, growth, replacement, big sizes.
add_executable(unit_alloc_live ${CMAKE_CURRENT_SOURCE_DIR}/unit/alloc_live_test.c)
target_link_libraries(unit_alloc_live PRIVATE ipscope_analyze)
add_test(NAME unit_alloc_live COMMAND unit_alloc_live)
set_tests_properties(unit_alloc_live PROPERTIES LABELS unit)

# Traces analyze must not trust (issue 13), from a writer of hostile traces.
add_executable(hostile_traces ${CMAKE_CURRENT_SOURCE_DIR}/e2e/hostile_traces.c)
set_target_properties(hostile_traces PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
target_link_libraries(hostile_traces PRIVATE ipscope_trace)
add_test(NAME e2e_report_hostile
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/report_hostile.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_report_hostile PROPERTIES LABELS e2e TIMEOUT 300)

# Debug info from a debuginfod server the test starts on 127.0.0.1 (and
# stops), then from servers that are down, silent or answer garbage.
add_test(NAME e2e_symbols_debuginfod
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/symbols_debuginfod.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_symbols_debuginfod PROPERTIES LABELS e2e TIMEOUT 180)

# The agent's own frames never show, -C included.
add_test(NAME e2e_report_agent COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/report_agent.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_report_agent PROPERTIES LABELS e2e TIMEOUT 300)

# JIT code named from perf maps copied into the trace: a tiny C JIT, then node.
add_test(NAME e2e_report_jit COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/report_jit.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_report_jit PROPERTIES LABELS e2e TIMEOUT 300)

# analyze archive, then --search-dir on the unpacked archive.
add_test(NAME e2e_symbols_archive COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/symbols_archive.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_symbols_archive PROPERTIES LABELS e2e TIMEOUT 300)
