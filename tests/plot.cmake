# Tests of analyze plot (analyze/plot*.c, builtin-plot.c, plots/*.gp):
# unit_plot draws every kind from hand-built profiles with gnuplot (PNGs
# read back by png_check.c, SVGs by xmllint) and checks the data files
# against known answers (heap and rate on an allocation profile built by
# hand; e2e_alloc_sampled plots real ones); e2e_plot draws real CPU traces and
# checks the data against flat and diff.
add_executable(unit_plot ${CMAKE_CURRENT_SOURCE_DIR}/unit/plot_test.c
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/png_check.c ${CMAKE_CURRENT_SOURCE_DIR}/unit/profile_builder.c)
target_link_libraries(unit_plot PRIVATE ipscope_analyze ZLIB::ZLIB)
add_test(NAME unit_plot COMMAND unit_plot ${CMAKE_BINARY_DIR})
set_tests_properties(unit_plot PROPERTIES LABELS unit TIMEOUT 300)

add_executable(png_info ${CMAKE_CURRENT_SOURCE_DIR}/e2e/png_info.c ${CMAKE_CURRENT_SOURCE_DIR}/unit/png_check.c)
target_include_directories(png_info PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit)
set_target_properties(png_info PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
target_link_libraries(png_info PRIVATE ZLIB::ZLIB)

add_test(NAME e2e_plot COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/plot.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_plot PROPERTIES LABELS e2e TIMEOUT 300)
