# Tests of the exporters (formats/export*.c, analyze export): the unit test on
# hand-built profiles, and the end-to-end test that runs the real consumers
# (go tool pprof, the speedscope schema) on exports of collected workloads.
add_executable(unit_export ${CMAKE_CURRENT_SOURCE_DIR}/unit/export_test.c)
# export_test.c unpacks pprof output with the generated protobuf-c code.
target_include_directories(unit_export PRIVATE ${CMAKE_BINARY_DIR}/formats)
target_link_libraries(unit_export PRIVATE ipscope_formats)
add_test(NAME unit_export COMMAND unit_export)
