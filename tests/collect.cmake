# collect: end-to-end tests of the collector and the trace it writes, on
# workloads with known answers (tests/e2e/workloads/collect_*.c).
ipscope_workload(collect_busy e2e/workloads/collect_busy.c)
ipscope_workload(collect_threads e2e/workloads/collect_threads.c)
target_link_libraries(collect_threads PRIVATE pthread)
ipscope_workload(collect_exit e2e/workloads/collect_exit.c)
ipscope_workload(collect_execle e2e/workloads/collect_execle.c)
ipscope_workload(collect_dlopen e2e/workloads/collect_dlopen.c)
target_link_libraries(collect_dlopen PRIVATE dl)
add_library(collect_plugin SHARED e2e/workloads/collect_plugin.c)
set_target_properties(collect_plugin PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/workloads)
target_compile_options(collect_plugin PRIVATE -O2 -g -fno-sanitize=all)
target_link_options(collect_plugin PRIVATE -fno-sanitize=all)
target_include_directories(collect_plugin PRIVATE ${CMAKE_SOURCE_DIR}/tests/e2e/workloads)
add_library(collect_plugin_b SHARED e2e/workloads/collect_plugin_b.c)
set_target_properties(collect_plugin_b PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/workloads)
target_compile_options(collect_plugin_b PRIVATE -O2 -g -fno-sanitize=all)
target_link_options(collect_plugin_b PRIVATE -fno-sanitize=all)
target_include_directories(collect_plugin_b PRIVATE ${CMAKE_SOURCE_DIR}/tests/e2e/workloads)
add_library(collect_plugin_ctor SHARED e2e/workloads/collect_plugin_ctor.c)
set_target_properties(collect_plugin_ctor PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/workloads)
target_compile_options(collect_plugin_ctor PRIVATE -O2 -g -fno-sanitize=all)
target_link_options(collect_plugin_ctor PRIVATE -fno-sanitize=all)
target_link_libraries(collect_plugin_ctor PRIVATE pthread)
target_include_directories(collect_plugin_ctor PRIVATE ${CMAKE_SOURCE_DIR}/tests/e2e/workloads)

foreach(test cpu_time threads_share exit_status program_killed truncated errors dlopen interrupt exec)
  add_test(NAME e2e_collect_${test}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_${test}.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(e2e_collect_${test} PROPERTIES LABELS e2e TIMEOUT 300)
endforeach()

ipscope_workload(collect_stress e2e/workloads/collect_stress.c)
target_link_libraries(collect_stress PRIVATE dl pthread)
add_test(NAME e2e_collect_stress COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_stress.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_stress PROPERTIES LABELS e2e TIMEOUT 180)

add_executable(unit_tick_weight unit/test_tick_weight.c)
target_include_directories(unit_tick_weight PRIVATE ${CMAKE_SOURCE_DIR}/collect/agent)
add_test(NAME unit_tick_weight COMMAND unit_tick_weight)
set_tests_properties(unit_tick_weight PROPERTIES LABELS unit)

# The sampled schemes' choice under a handler that decides too; "old": the logic before alloc_choice.h fails it.
add_executable(unit_alloc_choice unit/test_alloc_choice.c)
target_include_directories(unit_alloc_choice PRIVATE ${CMAKE_SOURCE_DIR}/collect/agent)
target_link_libraries(unit_alloc_choice PRIVATE m)
add_test(NAME unit_alloc_choice COMMAND unit_alloc_choice)
add_test(NAME unit_alloc_choice_old COMMAND unit_alloc_choice old)
set_tests_properties(unit_alloc_choice unit_alloc_choice_old PROPERTIES LABELS unit TIMEOUT 120)
set_tests_properties(unit_alloc_choice_old PROPERTIES WILL_FAIL TRUE)

# interpose.h lists every function the agent interposes: what the agent exports, no more, no less.
add_executable(unit_interposed_list unit/test_interposed.c)
target_include_directories(unit_interposed_list PRIVATE ${CMAKE_SOURCE_DIR}/collect/agent)
add_test(NAME unit_interposed COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/unit/interposed.sh
  $<TARGET_FILE:ipscope-agent> $<TARGET_FILE:unit_interposed_list>)
set_tests_properties(unit_interposed PROPERTIES LABELS unit)

add_executable(unit_transport unit/test_transport.c)
target_link_libraries(unit_transport PRIVATE ipscope_transport)
add_test(NAME unit_transport COMMAND unit_transport)
set_tests_properties(unit_transport PROPERTIES LABELS unit)

ipscope_workload(collect_fds e2e/workloads/collect_fds.c)
target_link_libraries(collect_fds PRIVATE pthread)
add_test(NAME e2e_collect_fds COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_fds.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_fds PROPERTIES LABELS e2e TIMEOUT 300)

ipscope_workload(collect_signals e2e/workloads/collect_signals.c)
add_library(collect_forkmask_lib SHARED e2e/workloads/collect_forkmask_lib.c)
set_target_properties(collect_forkmask_lib PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/workloads)
target_compile_options(collect_forkmask_lib PRIVATE -O2 -g -fno-sanitize=all)
target_link_options(collect_forkmask_lib PRIVATE -fno-sanitize=all)
target_link_libraries(collect_forkmask_lib PRIVATE pthread)
ipscope_workload(collect_forkmask e2e/workloads/collect_forkmask.c)
target_link_libraries(collect_forkmask PRIVATE collect_forkmask_lib)
add_test(NAME e2e_collect_signals COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_signals.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_signals PROPERTIES LABELS e2e TIMEOUT 300)

ipscope_workload(collect_churn e2e/workloads/collect_churn.c)
target_link_libraries(collect_churn PRIVATE pthread)
foreach(test threads_short threads_many)
  add_test(NAME e2e_collect_${test}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_${test}.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(e2e_collect_${test} PROPERTIES LABELS e2e TIMEOUT 300)
endforeach()

ipscope_workload(collect_kernel e2e/workloads/collect_kernel.c)
target_link_libraries(collect_kernel PRIVATE pthread)
add_test(NAME e2e_collect_kernel_time COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_kernel_time.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_kernel_time PROPERTIES LABELS e2e TIMEOUT 300)
# Kernel time outside system calls (page faults): what the samples miss, and why.
ipscope_workload(collect_faults e2e/workloads/collect_faults.c)
add_test(NAME e2e_collect_faults COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_faults.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_faults PROPERTIES LABELS e2e TIMEOUT 300)

# ulimit -v leaves no room for ASan's shadow memory: not under sanitizers.
ipscope_workload(collect_thread_limit e2e/workloads/collect_thread_limit.c)
target_link_libraries(collect_thread_limit PRIVATE pthread)
add_test(NAME e2e_collect_ulimit COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_ulimit.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_ulimit PROPERTIES LABELS "e2e;no-sanitize" TIMEOUT 300)

# Wall mode, the process tree, crashes and control (issue 9).
ipscope_workload(collect_wall e2e/workloads/collect_wall.c)
target_link_libraries(collect_wall PRIVATE pthread)
ipscope_workload(collect_io_uring e2e/workloads/collect_io_uring.c)
add_test(NAME e2e_collect_wall COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_wall.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_wall PROPERTIES LABELS e2e TIMEOUT 300)
ipscope_workload(collect_sleeps e2e/workloads/collect_sleeps.c)
target_link_libraries(collect_sleeps PRIVATE pthread)
add_test(NAME e2e_collect_transparent COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_transparent.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_transparent PROPERTIES LABELS e2e TIMEOUT 300)
ipscope_workload(collect_procs e2e/workloads/collect_procs.c)
ipscope_workload(proc_raw_fork e2e/workloads/proc_raw_fork.c)
target_link_libraries(proc_raw_fork PRIVATE dl pthread)
# A statically linked program: no agent can enter it (reported as not profiled).
ipscope_workload(collect_busy_static e2e/workloads/collect_busy.c)
target_link_options(collect_busy_static PRIVATE -static)
add_test(NAME e2e_collect_procs COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_procs.sh ${CMAKE_BINARY_DIR})
# 30 s alone; a loaded 2-core machine took over 120.
set_tests_properties(e2e_collect_procs PROPERTIES LABELS e2e TIMEOUT 400)
add_test(NAME e2e_collect_crash COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_crash.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_crash PROPERTIES LABELS e2e TIMEOUT 300)
add_test(NAME e2e_collect_deep COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_deep.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_deep PROPERTIES LABELS e2e TIMEOUT 300)
ipscope_workload(collect_region e2e/workloads/collect_region.c)
target_link_libraries(collect_region PRIVATE ipscope_region)
add_test(NAME e2e_collect_region COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_region.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_region PROPERTIES LABELS e2e TIMEOUT 300)
# collect_hidden is linked with a library whose constructor starts a thread before the agent starts.
add_library(collect_ctor_thread SHARED e2e/workloads/collect_ctor_thread.c)
set_target_properties(collect_ctor_thread PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/workloads)
target_compile_options(collect_ctor_thread PRIVATE -O2 -g -fno-sanitize=all -fomit-frame-pointer)
target_link_options(collect_ctor_thread PRIVATE -fno-sanitize=all)
target_include_directories(collect_ctor_thread PRIVATE ${CMAKE_SOURCE_DIR}/tests/e2e/workloads)
target_link_libraries(collect_ctor_thread PRIVATE pthread)
ipscope_workload(collect_hidden e2e/workloads/collect_hidden.c)
target_link_libraries(collect_hidden PRIVATE pthread collect_ctor_thread)
add_test(NAME e2e_collect_hidden COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_hidden.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_hidden PROPERTIES LABELS e2e TIMEOUT 300)
# Code on small stacks (a coroutine's, an alternate signal stack): what the sampling handler takes of them.
ipscope_workload(collect_small_stack e2e/workloads/collect_small_stack.c)
target_link_libraries(collect_small_stack PRIVATE pthread)
add_test(NAME e2e_collect_small_stack COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_small_stack.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_small_stack PROPERTIES LABELS e2e TIMEOUT 300)
# A single-threaded program stays single-threaded under collect until it starts a thread.
ipscope_workload(collect_one_thread e2e/workloads/collect_one_thread.c)
target_link_libraries(collect_one_thread PRIVATE pthread)
add_test(NAME e2e_collect_one_thread COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_one_thread.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_one_thread PROPERTIES LABELS e2e TIMEOUT 300)
# One descriptor short of RLIMIT_NOFILE, threads starting: the program's open() never fails.
ipscope_workload(collect_fd_limit e2e/workloads/collect_fd_limit.c)
target_link_libraries(collect_fd_limit PRIVATE pthread)
add_test(NAME e2e_collect_fd_limit COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_fd_limit.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_fd_limit PROPERTIES LABELS e2e TIMEOUT 300)
# Programs that sandbox themselves with seccomp, then start threads or fork.
ipscope_workload(collect_seccomp e2e/workloads/collect_seccomp.c)
target_link_libraries(collect_seccomp PRIVATE pthread)
add_test(NAME e2e_collect_seccomp COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/collect_seccomp.sh ${CMAKE_BINARY_DIR})
set_tests_properties(e2e_collect_seccomp PROPERTIES LABELS e2e TIMEOUT 300)

# The agent's table unwinder against libunwind, in one process, on known kinds of frames.
add_executable(unit_frametab unit/frametab/test_frametab.c unit/frametab/frametab_o0.c
  unit/frametab/frametab_cxx.cc ${CMAKE_SOURCE_DIR}/collect/agent/frametab.c
  ${CMAKE_SOURCE_DIR}/collect/agent/frametab_build.c ${CMAKE_SOURCE_DIR}/collect/agent/frametab_fde.c
  ${CMAKE_SOURCE_DIR}/collect/agent/frametab_chain.c)
target_include_directories(unit_frametab PRIVATE ${CMAKE_SOURCE_DIR}/collect/agent)
set_source_files_properties(unit/frametab/test_frametab.c unit/frametab/frametab_cxx.cc
  PROPERTIES COMPILE_OPTIONS "-O2;-fomit-frame-pointer")
set_source_files_properties(unit/frametab/frametab_o0.c PROPERTIES COMPILE_OPTIONS "-O0;-fno-omit-frame-pointer")
target_link_libraries(unit_frametab PRIVATE PkgConfig::LIBUNWIND pthread)
add_test(NAME unit_frametab COMMAND unit_frametab)
set_tests_properties(unit_frametab PROPERTIES LABELS unit TIMEOUT 60)

# collect -p: programs started without collect and attached to (attach_*.sh).
ipscope_workload(attach_target e2e/workloads/attach_target.c)
target_link_libraries(attach_target PRIVATE dl pthread)
foreach(test cpu wall errors)
  add_test(NAME e2e_attach_${test} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/attach_${test}.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(e2e_attach_${test} PROPERTIES LABELS e2e TIMEOUT 180)
endforeach()

# collect -p reads files and stacks another process chose (collect/remote_*.c, the agent's .eh_frame parser):
# seeded with the workloads stripped of debug info (fuzz/make_unwind_seeds.sh), replayed in every build
# (unit_remote_unwind_fuzz, under ASan in the sanitized one), fuzzed with IPSCOPE_FUZZ (fuzz_remote_unwind).
set(UNWIND_FUZZ_SEEDS ${CMAKE_CURRENT_BINARY_DIR}/fuzz_unwind_seeds)
add_custom_command(OUTPUT ${UNWIND_FUZZ_SEEDS}/stamp
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/make_unwind_seeds.sh ${CMAKE_OBJCOPY} ${UNWIND_FUZZ_SEEDS}
    $<TARGET_FILE:collect_busy> $<TARGET_FILE:attach_target> $<TARGET_FILE:collect_plugin>
  COMMAND ${CMAKE_COMMAND} -E touch ${UNWIND_FUZZ_SEEDS}/stamp
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/make_unwind_seeds.sh collect_busy attach_target collect_plugin
  COMMENT "remote unwind fuzz seeds" VERBATIM)
add_custom_target(unwind_fuzz_seeds ALL DEPENDS ${UNWIND_FUZZ_SEEDS}/stamp)
set(REMOTE_UNWIND_SOURCES ${CMAKE_SOURCE_DIR}/collect/remote_modules.c ${CMAKE_SOURCE_DIR}/collect/remote_unwind.c
  ${CMAKE_SOURCE_DIR}/collect/agent/frametab_fde.c ${CMAKE_SOURCE_DIR}/collect/agent/frametab_build.c)
add_executable(unit_remote_unwind_fuzz fuzz/fuzz_remote_unwind.c fuzz/fuzz_replay.c ${REMOTE_UNWIND_SOURCES})
target_include_directories(unit_remote_unwind_fuzz PRIVATE ${CMAKE_SOURCE_DIR}/collect ${CMAKE_SOURCE_DIR}/collect/agent)
target_link_libraries(unit_remote_unwind_fuzz PRIVATE ipscope_trace ipscope_common)
add_dependencies(unit_remote_unwind_fuzz unwind_fuzz_seeds)
add_test(NAME unit_remote_unwind_fuzz COMMAND unit_remote_unwind_fuzz ${UNWIND_FUZZ_SEEDS})
set_tests_properties(unit_remote_unwind_fuzz PROPERTIES TIMEOUT 120 LABELS unit
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1")
if(IPSCOPE_FUZZ)
  add_executable(fuzz_remote_unwind fuzz/fuzz_remote_unwind.c ${REMOTE_UNWIND_SOURCES})
  target_include_directories(fuzz_remote_unwind PRIVATE ${CMAKE_SOURCE_DIR}/collect ${CMAKE_SOURCE_DIR}/collect/agent)
  target_compile_options(fuzz_remote_unwind PRIVATE ${FUZZ_FLAGS} -g)
  target_link_options(fuzz_remote_unwind PRIVATE ${FUZZ_FLAGS})
  target_link_libraries(fuzz_remote_unwind PRIVATE ipscope_trace ipscope_common)
  add_dependencies(fuzz_remote_unwind unwind_fuzz_seeds)
  set(work ${CMAKE_CURRENT_BINARY_DIR}/fuzz_remote_unwind_corpus)
  set(artifacts ${CMAKE_CURRENT_BINARY_DIR}/fuzz_remote_unwind_artifacts)
  add_test(NAME fuzz_remote_unwind
    COMMAND sh -c "rm -rf '${work}' && mkdir -p '${work}' '${artifacts}' && cp '${UNWIND_FUZZ_SEEDS}'/* '${work}/' && rm -f '${work}/stamp' && exec \"$0\" -max_total_time=30 -timeout=10 -max_len=65536 -print_final_stats=1 -artifact_prefix='${artifacts}/' '${work}'"
    $<TARGET_FILE:fuzz_remote_unwind>)
  set_tests_properties(fuzz_remote_unwind PROPERTIES TIMEOUT 120 LABELS fuzz)
endif()
