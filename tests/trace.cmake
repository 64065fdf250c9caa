# Tests of the trace format (formats/trace_*.c): the unit test and, with
# IPSCOPE_FUZZ, the libFuzzer target of the reader run for a bounded time.
#
# They compile the two trace sources themselves rather than link
# ipscope_formats: the trace format is tested on its own, and the fuzzer
# needs those sources instrumented with -fsanitize=fuzzer.
set(TRACE_SOURCES ${CMAKE_SOURCE_DIR}/formats/trace_writer.c ${CMAKE_SOURCE_DIR}/formats/trace_reader.c)

add_executable(unit_trace ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_trace.c ${TRACE_SOURCES})
target_include_directories(unit_trace PRIVATE ${CMAKE_SOURCE_DIR}/formats)
target_link_libraries(unit_trace PRIVATE PkgConfig::ZSTD)
add_test(NAME unit_trace COMMAND unit_trace)
set_tests_properties(unit_trace PROPERTIES TIMEOUT 600)
