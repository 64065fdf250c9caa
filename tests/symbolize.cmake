# Tests of the symbolizer (analyze/symbolize/*.c): a unit test on workloads
# built -O2 -g as users build them (inline, C++, stripped with a debuglink or
# a --debug-dir, symbol table only, rebuilt), and agreement with binutils'
# addr2line on libc (DWARF 5, with libc6-dbg), a large generated program in
# DWARF 4 and 5, and the C++ workload.
# The workloads are compiled by plain compiler calls, not targets, so that no
# project flag (-Werror, sanitizers) changes how they are built.
ipscope_need_program(OBJCOPY objcopy binutils)
find_program(ADDR2LINE addr2line)
set(SYM_SRC ${CMAKE_CURRENT_SOURCE_DIR}/unit/symbolize)
set(SYM_BIN ${CMAKE_CURRENT_BINARY_DIR}/symbolize)
set(SYM_INLINE_DEPS ${SYM_SRC}/inline_workload.c ${SYM_SRC}/inline_helper.h)

add_custom_command(OUTPUT ${SYM_BIN}/inline_workload ${SYM_BIN}/inline_workload_v2
  COMMAND ${CMAKE_COMMAND} -E make_directory ${SYM_BIN}
  COMMAND ${CMAKE_C_COMPILER} -O2 -g -o ${SYM_BIN}/inline_workload ${SYM_SRC}/inline_workload.c
  COMMAND ${CMAKE_C_COMPILER} -O2 -g -DVARIANT=1 -o ${SYM_BIN}/inline_workload_v2
    ${SYM_SRC}/inline_workload.c
  DEPENDS ${SYM_INLINE_DEPS}
  COMMENT "symbolize workloads: inline_workload")

# Stripped copies: DWARF beside in .debug/ (debuglink), DWARF in a separate
# store (found through --debug-dir), and none at all.
add_custom_command(OUTPUT ${SYM_BIN}/debuglink/inline_workload ${SYM_BIN}/debugdir/inline_workload
    ${SYM_BIN}/nodebug/inline_workload ${SYM_BIN}/store/inline_workload.debug
  COMMAND ${CMAKE_COMMAND} -E make_directory ${SYM_BIN}/debuglink/.debug ${SYM_BIN}/debugdir
    ${SYM_BIN}/nodebug ${SYM_BIN}/store
  COMMAND ${OBJCOPY} --only-keep-debug ${SYM_BIN}/inline_workload
    ${SYM_BIN}/debuglink/.debug/inline_workload.debug
  COMMAND ${OBJCOPY} --strip-debug
    --add-gnu-debuglink=${SYM_BIN}/debuglink/.debug/inline_workload.debug
    ${SYM_BIN}/inline_workload ${SYM_BIN}/debuglink/inline_workload
  COMMAND ${OBJCOPY} --only-keep-debug ${SYM_BIN}/inline_workload
    ${SYM_BIN}/store/inline_workload.debug
  COMMAND ${OBJCOPY} --strip-debug --add-gnu-debuglink=${SYM_BIN}/store/inline_workload.debug
    ${SYM_BIN}/inline_workload ${SYM_BIN}/debugdir/inline_workload
  COMMAND ${OBJCOPY} --strip-debug ${SYM_BIN}/inline_workload ${SYM_BIN}/nodebug/inline_workload
  DEPENDS ${SYM_BIN}/inline_workload
  COMMENT "symbolize workloads: stripped copies")

# No symbols at all (strip --strip-all keeps .eh_frame): functions bounded by
# their FDEs; the same with the workload's FDEs in .debug_frame only (built
# without unwind tables); and a build exporting its functions, whose .dynsym
# names them.
add_custom_command(OUTPUT ${SYM_BIN}/stripped/inline_workload ${SYM_BIN}/stripped/inline_workload_dyn
    ${SYM_BIN}/stripped/inline_workload_debug_frame
  COMMAND ${CMAKE_COMMAND} -E make_directory ${SYM_BIN}/stripped
  COMMAND ${OBJCOPY} --strip-all ${SYM_BIN}/inline_workload ${SYM_BIN}/stripped/inline_workload
  COMMAND ${CMAKE_C_COMPILER} -O2 -g -fno-asynchronous-unwind-tables
    -o ${SYM_BIN}/stripped/inline_workload_debug_frame.full ${SYM_SRC}/inline_workload.c
  COMMAND ${OBJCOPY} --strip-all --keep-section=.debug_frame
    ${SYM_BIN}/stripped/inline_workload_debug_frame.full ${SYM_BIN}/stripped/inline_workload_debug_frame
  COMMAND ${CMAKE_C_COMPILER} -O2 -g -rdynamic -o ${SYM_BIN}/stripped/inline_workload_dyn.full
    ${SYM_SRC}/inline_workload.c
  COMMAND ${OBJCOPY} --strip-all ${SYM_BIN}/stripped/inline_workload_dyn.full
    ${SYM_BIN}/stripped/inline_workload_dyn
  DEPENDS ${SYM_BIN}/inline_workload ${SYM_INLINE_DEPS}
  COMMENT "symbolize workloads: copies without symbols")

add_custom_command(OUTPUT ${SYM_BIN}/cpp_workload
  COMMAND ${CMAKE_COMMAND} -E make_directory ${SYM_BIN}
  COMMAND ${CMAKE_CXX_COMPILER} -O2 -g -o ${SYM_BIN}/cpp_workload ${SYM_SRC}/cpp_workload.cpp
  DEPENDS ${SYM_SRC}/cpp_workload.cpp
  COMMENT "symbolize workloads: cpp_workload")

# What the symbol table must name right: assembly labels, unsized
# functions, public aliases, PLT stubs (the assembly kept in place).
add_custom_command(OUTPUT ${SYM_BIN}/symbols_workload
  COMMAND ${CMAKE_COMMAND} -E make_directory ${SYM_BIN}
  COMMAND ${CMAKE_C_COMPILER} -O2 -g -fno-toplevel-reorder -o ${SYM_BIN}/symbols_workload
    ${SYM_SRC}/symbols_workload.c
  DEPENDS ${SYM_SRC}/symbols_workload.c
  COMMENT "symbolize workloads: symbols_workload")

# Rust, built by Debian's rustc (scripts/debian-packages.txt) with debug
# info, in both manglings: legacy (rustc's default) and v0.
find_program(RUSTC rustc PATHS /usr/bin NO_DEFAULT_PATH)
ipscope_need_program(RUSTC rustc rustc)
add_custom_command(OUTPUT ${SYM_BIN}/rust_legacy ${SYM_BIN}/rust_v0
  COMMAND ${CMAKE_COMMAND} -E make_directory ${SYM_BIN}
  COMMAND ${RUSTC} -g -C opt-level=2 -o ${SYM_BIN}/rust_legacy ${SYM_SRC}/rust_workload.rs
  COMMAND ${RUSTC} -g -C opt-level=2 -C symbol-mangling-version=v0 -o ${SYM_BIN}/rust_v0
    ${SYM_SRC}/rust_workload.rs
  DEPENDS ${SYM_SRC}/rust_workload.rs
  COMMENT "symbolize workloads: rust_workload")

add_custom_target(symbolize_workloads ALL DEPENDS ${SYM_BIN}/inline_workload
  ${SYM_BIN}/debuglink/inline_workload ${SYM_BIN}/stripped/inline_workload ${SYM_BIN}/cpp_workload ${SYM_BIN}/symbols_workload
  ${SYM_BIN}/rust_legacy)

add_executable(unit_symbolize_names ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_symbolize_names.c)
target_link_libraries(unit_symbolize_names PRIVATE ipscope_analyze)
add_dependencies(unit_symbolize_names symbolize_workloads)
add_test(NAME unit_symbolize_names COMMAND unit_symbolize_names ${SYM_SRC} ${SYM_BIN})
set_tests_properties(unit_symbolize_names PROPERTIES TIMEOUT 300 LABELS unit)

add_executable(unit_symbolize ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_symbolize.c)
target_link_libraries(unit_symbolize PRIVATE ipscope_analyze)
add_dependencies(unit_symbolize symbolize_workloads symbolize_generated symbolize_links)
add_test(NAME unit_symbolize COMMAND unit_symbolize ${SYM_SRC} ${SYM_BIN})
set_tests_properties(unit_symbolize PROPERTIES TIMEOUT 300 LABELS unit)
# Damaged copies of a workload and of its supplementary and split DWARF
# files: no crash, no hang, no leak.
add_test(NAME unit_symbolize_corrupt COMMAND unit_symbolize ${SYM_SRC} ${SYM_BIN} corrupt)
set_tests_properties(unit_symbolize_corrupt PROPERTIES TIMEOUT 300 LABELS unit
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1")

# The driver bench/symbolize-speed times; the agreement tests use it too.
add_executable(symbolize_bench ${CMAKE_SOURCE_DIR}/bench/symbolize_bench.c)
target_link_libraries(symbolize_bench PRIVATE ipscope_analyze)

# A large generated C program (inline chains across a header, .cold and .part
# clones, several text sections), built with DWARF 4 (range lists relative to
# the CU base, 1-based file indexes) and DWARF 5, for the agreement tests.
set(SYM_GEN_MODULES 40)
add_custom_command(OUTPUT ${SYM_BIN}/generated_dwarf4 ${SYM_BIN}/generated_dwarf5
  COMMAND sh ${SYM_SRC}/gen_program.sh ${SYM_BIN}/generated ${SYM_GEN_MODULES}
  COMMAND ${CMAKE_C_COMPILER} -O2 -gdwarf-4 -o ${SYM_BIN}/generated_dwarf4
    ${SYM_BIN}/generated/*.c
  COMMAND ${CMAKE_C_COMPILER} -O2 -gdwarf-5 -o ${SYM_BIN}/generated_dwarf5
    ${SYM_BIN}/generated/*.c
  DEPENDS ${SYM_SRC}/gen_program.sh
  COMMENT "symbolize workloads: generated program (DWARF 4 and 5)")
add_custom_target(symbolize_generated ALL DEPENDS ${SYM_BIN}/generated_dwarf4)

if(ADDR2LINE)
  set(SYM_AGREE ${SYM_SRC}/agree.sh)
  add_test(NAME symbolize_agree_libc COMMAND sh ${SYM_AGREE} $<TARGET_FILE:symbolize_bench> libc
    100000 1000)
  add_test(NAME symbolize_agree_dwarf4 COMMAND sh ${SYM_AGREE} $<TARGET_FILE:symbolize_bench>
    ${SYM_BIN}/generated_dwarf4 10000 1000)
  add_test(NAME symbolize_agree_dwarf5 COMMAND sh ${SYM_AGREE} $<TARGET_FILE:symbolize_bench>
    ${SYM_BIN}/generated_dwarf5 10000 1000)
  add_test(NAME symbolize_agree_cpp COMMAND sh ${SYM_AGREE} $<TARGET_FILE:symbolize_bench>
    ${SYM_BIN}/cpp_workload 100 100)
  set_tests_properties(symbolize_agree_libc symbolize_agree_dwarf4 symbolize_agree_dwarf5
    symbolize_agree_cpp PROPERTIES TIMEOUT 600 LABELS unit)
endif()

# DWARF in other files, as distributions and large projects ship it: dwz
# supplementary files and split DWARF (.dwo, .dwp), DWARF 4 and 5, built by
# make_links.sh with Debian's dwz, binutils' dwp and llvm-dwp, each compared
# with the plain build of the same code; and the same files missing, cut
# short or from another build.
ipscope_need_program(DWZ dwz dwz)
ipscope_need_program(DWP dwp binutils)
ipscope_need_program(LLVM_DWP llvm-dwp llvm)
add_custom_command(OUTPUT ${SYM_BIN}/links/stamp
  COMMAND sh ${SYM_SRC}/make_links.sh ${CMAKE_C_COMPILER} ${SYM_SRC} ${SYM_BIN}/generated
    ${SYM_BIN}/links
  COMMAND ${CMAKE_COMMAND} -E touch ${SYM_BIN}/links/stamp
  DEPENDS ${SYM_SRC}/make_links.sh ${SYM_INLINE_DEPS} ${SYM_BIN}/generated_dwarf4
  COMMENT "symbolize workloads: dwz and split DWARF")
add_custom_target(symbolize_links ALL DEPENDS ${SYM_BIN}/links/stamp)
add_dependencies(symbolize_links symbolize_generated symbolize_workloads)

add_executable(unit_symbolize_links ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_symbolize_links.c)
target_link_libraries(unit_symbolize_links PRIVATE ipscope_analyze)
add_dependencies(unit_symbolize_links symbolize_links)
add_test(NAME unit_symbolize_links COMMAND unit_symbolize_links ${SYM_BIN})
set_tests_properties(unit_symbolize_links PROPERTIES TIMEOUT 300 LABELS unit)

# The symbolizer's fuzz targets (tests/fuzz/fuzz_symbolize_*.c: a whole ELF
# file; the DWARF sections of a module and of its dwz, .dwo and .dwp files),
# seeded at build time from inline_workload.c built the ways analyze meets
# binaries (make_symbolize_seeds.sh). In every build, the seeds and the kept
# regression inputs (tests/fuzz/symbolize_*_regress/) go once through each
# target's checks without libFuzzer (unit_symbolize_fuzz_*, under ASan in
# the sanitized build); with IPSCOPE_FUZZ, libFuzzer runs from them for a
# bounded time (fuzz_symbolize_*), crashes landing in fuzz_symbolize_artifacts/.
if(CMAKE_C_COMPILER_ID MATCHES "Clang")
  find_program(SYM_OTHER_CC gcc)
else()
  find_program(SYM_OTHER_CC clang)
endif()
set(SYM_OTHER_CC_ARG "${SYM_OTHER_CC}")
if(NOT SYM_OTHER_CC)
  set(SYM_OTHER_CC_ARG "")
endif()
set(SYM_FUZZ ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
set(SYM_FUZZ_SEEDS ${CMAKE_CURRENT_BINARY_DIR}/fuzz_symbolize_seeds)
add_executable(make_symbolize_corpus ${SYM_FUZZ}/make_symbolize_corpus.c)
target_link_libraries(make_symbolize_corpus PRIVATE PkgConfig::LIBELF)
add_custom_command(OUTPUT ${SYM_FUZZ_SEEDS}/stamp
  COMMAND sh ${SYM_FUZZ}/make_symbolize_seeds.sh $<TARGET_FILE:make_symbolize_corpus>
    ${CMAKE_C_COMPILER} "${SYM_OTHER_CC_ARG}" ${SYM_SRC} ${SYM_FUZZ_SEEDS}
  COMMAND ${CMAKE_COMMAND} -E touch ${SYM_FUZZ_SEEDS}/stamp
  DEPENDS ${SYM_FUZZ}/make_symbolize_seeds.sh make_symbolize_corpus ${SYM_INLINE_DEPS}
  COMMENT "symbolize fuzz seeds" VERBATIM)
add_custom_target(symbolize_fuzz_seeds ALL DEPENDS ${SYM_FUZZ_SEEDS}/stamp)

foreach(kind elf dwarf)
  set(regress ${SYM_FUZZ}/symbolize_${kind}_regress)
  add_executable(unit_symbolize_fuzz_${kind} ${SYM_FUZZ}/fuzz_symbolize_${kind}.c
    ${SYM_FUZZ}/fuzz_symbolize.c ${SYM_FUZZ}/fuzz_replay.c)
  target_link_libraries(unit_symbolize_fuzz_${kind} PRIVATE ipscope_analyze PkgConfig::LIBDEFLATE)
  add_dependencies(unit_symbolize_fuzz_${kind} symbolize_fuzz_seeds)
  add_test(NAME unit_symbolize_fuzz_${kind} COMMAND sh -c
    "exec \"$0\" '${SYM_FUZZ_SEEDS}/${kind}' $(ls -d '${regress}' 2>/dev/null)"
    $<TARGET_FILE:unit_symbolize_fuzz_${kind}>)
  set_tests_properties(unit_symbolize_fuzz_${kind} PROPERTIES TIMEOUT 300 LABELS unit
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1")

  if(IPSCOPE_FUZZ)
    # The symbolizer's own sources, instrumented for libFuzzer.
    file(GLOB SYM_LIB_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/analyze/symbolize/*.c)
    add_executable(fuzz_symbolize_${kind} ${SYM_FUZZ}/fuzz_symbolize_${kind}.c
      ${SYM_FUZZ}/fuzz_symbolize.c ${SYM_LIB_SOURCES})
    target_include_directories(fuzz_symbolize_${kind} PRIVATE ${CMAKE_SOURCE_DIR}/analyze/symbolize
      ${LIBDWARF_INCLUDE_DIR} ${LIBIBERTY_INCLUDE_DIR} ${LIBDEBUGINFOD_INCLUDE_DIRS})
    target_compile_options(fuzz_symbolize_${kind} PRIVATE ${FUZZ_FLAGS} -g)
    target_link_options(fuzz_symbolize_${kind} PRIVATE ${FUZZ_FLAGS})
    target_link_libraries(fuzz_symbolize_${kind} PRIVATE ipscope_profile ipscope_trace ipscope_common
      PkgConfig::LIBELF PkgConfig::LIBDEFLATE ${LIBIBERTY_LIBRARY} ${CMAKE_DL_LIBS})
    add_dependencies(fuzz_symbolize_${kind} symbolize_fuzz_seeds)
    set(work ${CMAKE_CURRENT_BINARY_DIR}/fuzz_symbolize_${kind}_corpus)
    set(artifacts ${CMAKE_CURRENT_BINARY_DIR}/fuzz_symbolize_artifacts)
    add_test(NAME fuzz_symbolize_${kind}
      COMMAND sh -c "rm -rf '${work}' && mkdir -p '${work}' '${artifacts}' && cp '${SYM_FUZZ_SEEDS}/${kind}'/* '${work}/' && { [ ! -d '${regress}' ] || cp '${regress}'/* '${work}/'; } && exec \"$0\" -max_total_time=30 -timeout=10 -max_len=65536 -print_final_stats=1 -artifact_prefix='${artifacts}/${kind}-' '${work}'"
      $<TARGET_FILE:fuzz_symbolize_${kind}>)
    set_tests_properties(fuzz_symbolize_${kind} PROPERTIES TIMEOUT 120 LABELS fuzz)
  endif()
endforeach()
