# Tests of installing ipscope (cmake/install.cmake, doc/): an install into a
# temporary prefix, the Debian package unpacked elsewhere, the manual pages
# against --help, and the bash completion.
add_test(NAME e2e_install_prefix COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/install_prefix.sh ${CMAKE_BINARY_DIR})
add_test(NAME e2e_install_deb COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/install_deb.sh ${CMAKE_BINARY_DIR})
add_test(NAME e2e_install_man COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/install_man.sh ${CMAKE_BINARY_DIR})
add_test(NAME e2e_install_completion COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/install_completion.sh
  ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
# Where the revision comes from in each kind of source tree (cmake/revision.cmake).
add_test(NAME e2e_revision COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/e2e/revision.sh ${CMAKE_BINARY_DIR}
  ${CMAKE_SOURCE_DIR})
set_tests_properties(e2e_install_prefix e2e_install_deb e2e_install_man e2e_install_completion e2e_revision
  PROPERTIES LABELS e2e TIMEOUT 300)
# Packaging sanitizer builds proves nothing more and costs a minute.
set_tests_properties(e2e_install_deb PROPERTIES LABELS "e2e;no-sanitize")
