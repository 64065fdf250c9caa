# Golden outputs: reports and exports of small deterministic CPU traces
# (tests/golden/*.trace.zst, made by make_golden_traces) must stay
# byte-identical to what main printed before the values model (commit
# 626e6a0), saved in tests/golden/expected/.
add_executable(make_golden_traces ${CMAKE_CURRENT_SOURCE_DIR}/golden/make_golden_traces.c)
target_link_libraries(make_golden_traces PRIVATE ipscope_trace)
add_test(NAME e2e_golden COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/check.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_golden PROPERTIES LABELS e2e TIMEOUT 300)
