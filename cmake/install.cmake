# install.cmake - where `cmake --install` and the Debian package put things:
#   bin/                                  collect, analyze
#   lib/ipscope/                          the agent (collect finds it at
#                                         ../lib/ipscope/ from its own path)
#   share/man/man1/                       collect(1), analyze(1), analyze-CMD(1)
#   share/bash-completion/completions/    collect, analyze
#   share/doc/ipscope/                    README.md, TRACE_FORMAT.md, and doc/*.md
#                                         in doc/ (README's links hold)
#   include/                              ipscope.h (ipscope_start, ipscope_stop)
#   share/ipscope/plots/                  the gnuplot templates of analyze plot
#                                         (found at ../share/ipscope/plots/ from
#                                         analyze's own path)
# and the CPack settings for `cpack -G DEB`: Depends derived from the binaries
# by dpkg-shlibdeps, version = project version + the build's git revision.
include(GNUInstallDirs)
install(TARGETS collect analyze RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ipscope-agent LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ipscope)
install(DIRECTORY ${CMAKE_BINARY_DIR}/man/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
  FILES_MATCHING PATTERN "*.1")
install(FILES ${CMAKE_SOURCE_DIR}/doc/completion/ipscope.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME analyze)
install(FILES ${CMAKE_SOURCE_DIR}/doc/completion/ipscope.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME collect)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/formats/trace/TRACE_FORMAT.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB IPSCOPE_DOCS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/doc/*.md)
install(FILES ${IPSCOPE_DOCS} DESTINATION ${CMAKE_INSTALL_DOCDIR}/doc)
install(FILES ${IPSCOPE_PLOT_TEMPLATES} DESTINATION ${CMAKE_INSTALL_DATADIR}/ipscope/plots)
# ipscope_start()/ipscope_stop() for programs that bracket a region (header only).
install(FILES ${CMAKE_SOURCE_DIR}/collect/include/ipscope.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(CPACK_PACKAGE_NAME ipscope)
set(CPACK_PACKAGE_VENDOR "ipscope")
set(CPACK_PACKAGE_CONTACT "ipscope developers <ipscope@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "sampling and allocation profiler for native Linux programs")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# analyze loads libdebuginfod with dlopen: dpkg-shlibdeps does not see it.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libdebuginfod1")
# analyze plot runs gnuplot; everything else works without it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gnuplot-nox | gnuplot")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES OFF)
# The version is decided when cpack runs, from the revision the binaries were
# built with (generated/ipscope_revision.h), not when cmake configured.
set(IPSCOPE_REVISION_HEADER ${IPSCOPE_GENERATED_DIR}/ipscope_revision.h)
configure_file(${CMAKE_SOURCE_DIR}/cmake/cpack-project.cmake.in
  ${CMAKE_BINARY_DIR}/cpack-project.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_BINARY_DIR}/cpack-project.cmake)
include(CPack)
