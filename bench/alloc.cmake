# The malloc/free-heavy program of bench/alloc-overhead (its other workload
# is bench/binary_trees.lua on Debian's lua5.4).
add_executable(bench_alloc_workload ${CMAKE_CURRENT_SOURCE_DIR}/alloc_workload.c)
target_link_libraries(bench_alloc_workload PRIVATE pthread)
