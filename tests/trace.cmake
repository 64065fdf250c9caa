# Tests of the trace format (formats/trace/trace_*.c): the unit tests and, with
# IPSCOPE_FUZZ, the libFuzzer target of the reader run for a bounded time.
#
# They compile the trace sources themselves rather than link
# ipscope_trace: the trace format is tested on its own, and the fuzzer
# needs those sources instrumented with -fsanitize=fuzzer.
set(TRACE_SOURCES ${CMAKE_SOURCE_DIR}/formats/trace/trace_writer.c ${CMAKE_SOURCE_DIR}/formats/trace/trace_reader.c
  ${CMAKE_SOURCE_DIR}/formats/trace/trace_cursor.c ${CMAKE_SOURCE_DIR}/formats/trace/trace_records.c ${CMAKE_SOURCE_DIR}/formats/trace/trace_allocs.c
  ${CMAKE_SOURCE_DIR}/formats/trace/trace_heap_refs.c)

# unit_trace goes through the writer; unit_trace_layout reads hand-built streams.
foreach(test unit_trace unit_trace_layout)
  string(REPLACE unit_ test_ source ${test})
  add_executable(${test} ${CMAKE_CURRENT_SOURCE_DIR}/unit/${source}.c
    ${CMAKE_CURRENT_SOURCE_DIR}/unit/trace_test_support.c ${TRACE_SOURCES})
  target_include_directories(${test} PRIVATE ${CMAKE_SOURCE_DIR}/formats/trace)
  target_link_libraries(${test} PRIVATE PkgConfig::ZSTD)
  add_test(NAME ${test} COMMAND ${test})
  set_tests_properties(${test} PROPERTIES TIMEOUT 600 LABELS unit)
endforeach()
target_sources(unit_trace_layout PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_trace_layout_allocs.c)

# The fuzzer runs on a copy of the committed seed corpus (libFuzzer adds the
# inputs it finds to its first directory), for a bounded time; crashes land
# in fuzz_trace_artifacts/ of the build directory.
if(IPSCOPE_FUZZ)
  add_executable(fuzz_trace_reader ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_trace_reader.c
    ${CMAKE_SOURCE_DIR}/formats/trace/trace_reader.c ${CMAKE_SOURCE_DIR}/formats/trace/trace_cursor.c
    ${CMAKE_SOURCE_DIR}/formats/trace/trace_records.c ${CMAKE_SOURCE_DIR}/formats/trace/trace_allocs.c
    ${CMAKE_SOURCE_DIR}/formats/trace/trace_heap_refs.c)
  target_include_directories(fuzz_trace_reader PRIVATE ${CMAKE_SOURCE_DIR}/formats/trace)
  target_compile_options(fuzz_trace_reader PRIVATE ${FUZZ_FLAGS} -g)
  # A 256-byte initial window makes the reader's window handling reachable.
  target_compile_definitions(fuzz_trace_reader PRIVATE TRACE_READER_WINDOW=256)
  target_link_options(fuzz_trace_reader PRIVATE ${FUZZ_FLAGS})
  target_link_libraries(fuzz_trace_reader PRIVATE PkgConfig::ZSTD)

  add_executable(make_trace_corpus ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/make_trace_corpus.c
    ${CMAKE_SOURCE_DIR}/formats/trace/trace_writer.c ${CMAKE_SOURCE_DIR}/formats/trace/trace_heap_refs.c)
  target_include_directories(make_trace_corpus PRIVATE ${CMAKE_SOURCE_DIR}/formats/trace)
  target_link_libraries(make_trace_corpus PRIVATE PkgConfig::ZSTD)

  set(FUZZ_WORK ${CMAKE_CURRENT_BINARY_DIR}/fuzz_trace_corpus)
  set(FUZZ_ARTIFACTS ${CMAKE_CURRENT_BINARY_DIR}/fuzz_trace_artifacts)
  add_test(NAME fuzz_trace_reader
    COMMAND sh -c "rm -rf '${FUZZ_WORK}' && mkdir -p '${FUZZ_WORK}' '${FUZZ_ARTIFACTS}' && cp '${CMAKE_CURRENT_SOURCE_DIR}'/fuzz/corpus/* '${FUZZ_WORK}/' && exec \"$0\" -max_total_time=30 -timeout=10 -max_len=16384 -print_final_stats=1 -dict='${CMAKE_CURRENT_SOURCE_DIR}/fuzz/trace.dict' -artifact_prefix='${FUZZ_ARTIFACTS}/' '${FUZZ_WORK}'"
    $<TARGET_FILE:fuzz_trace_reader>)
  set_tests_properties(fuzz_trace_reader PROPERTIES TIMEOUT 120 LABELS fuzz)

  # The perf-map parser reads text the profiled program wrote (JIT_MAP).
  add_executable(fuzz_jitmap ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_jitmap.c
    ${CMAKE_SOURCE_DIR}/analyze/load/jitmap_parse.c ${CMAKE_SOURCE_DIR}/formats/common/alloc.c)
  target_include_directories(fuzz_jitmap PRIVATE ${CMAKE_SOURCE_DIR}/analyze/load ${CMAKE_SOURCE_DIR}/formats/common)
  target_compile_options(fuzz_jitmap PRIVATE ${FUZZ_FLAGS} -g)
  target_link_options(fuzz_jitmap PRIVATE ${FUZZ_FLAGS})
  set(FUZZ_JIT_WORK ${CMAKE_CURRENT_BINARY_DIR}/fuzz_jitmap_corpus)
  add_test(NAME fuzz_jitmap
    COMMAND sh -c "rm -rf '${FUZZ_JIT_WORK}' && mkdir -p '${FUZZ_JIT_WORK}' '${FUZZ_ARTIFACTS}' && cp '${CMAKE_CURRENT_SOURCE_DIR}'/fuzz/jitmap_corpus/* '${FUZZ_JIT_WORK}/' && exec \"$0\" -max_total_time=15 -timeout=10 -max_len=4096 -print_final_stats=1 -artifact_prefix='${FUZZ_ARTIFACTS}/jitmap-' '${FUZZ_JIT_WORK}'"
    $<TARGET_FILE:fuzz_jitmap>)
  set_tests_properties(fuzz_jitmap PROPERTIES TIMEOUT 120 LABELS fuzz)
endif()
