# The viewer's model driven without a terminal (bench/view-speed; also how a
# script looks at the screen analyze view would draw).
add_executable(view_bench ${CMAKE_CURRENT_SOURCE_DIR}/view_bench.c)
target_link_libraries(view_bench PRIVATE ipscope_analyze)
