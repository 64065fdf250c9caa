# Tests of analyze source and analyze view: the viewer's model and the
# per-line costs on hand-built profiles (CPU and allocations, in the shape
# the loader gives them), analyze source on a CPU workload, and the viewer
# on a real terminal in tmux, on a CPU trace and on a collect --allocs
# trace (alloc_sites, tests/allocs.cmake builds it).
add_executable(unit_view ${CMAKE_CURRENT_SOURCE_DIR}/unit/view_test.c
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/profile_builder.c)
target_link_libraries(unit_view PRIVATE ipscope_analyze)
add_test(NAME unit_view COMMAND unit_view)
set_tests_properties(unit_view PROPERTIES LABELS unit)
add_executable(unit_view_alloc ${CMAKE_CURRENT_SOURCE_DIR}/unit/view_alloc_test.c
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/profile_builder.c)
target_link_libraries(unit_view_alloc PRIVATE ipscope_analyze)
add_test(NAME unit_view_alloc COMMAND unit_view_alloc)
set_tests_properties(unit_view_alloc PROPERTIES LABELS unit)
add_executable(unit_source ${CMAKE_CURRENT_SOURCE_DIR}/unit/source_test.c
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/profile_builder.c)
target_link_libraries(unit_source PRIVATE ipscope_analyze)
add_test(NAME unit_source COMMAND unit_source)
set_tests_properties(unit_source PROPERTIES LABELS unit)
add_test(NAME e2e_source COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/source.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_source PROPERTIES LABELS e2e TIMEOUT 300)
# analyze source --asm: per-instruction costs of report_split's hot loop, with
# symbols and stripped (the FDE's extent).
add_test(NAME e2e_source_asm COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/source_asm.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_source_asm PROPERTIES LABELS e2e TIMEOUT 300)
add_test(NAME e2e_view_tmux COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/view_tmux.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_view_tmux PROPERTIES LABELS e2e TIMEOUT 300)
add_test(NAME e2e_view_alloc COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/view_alloc.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_view_alloc PROPERTIES LABELS e2e TIMEOUT 300)
