# `cmake --install`: the CLI in bin/, the libraries in lib/, the public headers under
# include/tinygpt/ and a CMake package, so that a consumer writes
#   find_package(tinygpt CONFIG REQUIRED)                      # or COMPONENTS autograd nn ...
#   target_link_libraries(app PRIVATE tinygpt::tinygpt)        # or tinygpt::autograd, ...
# `cpack -G DEB` in the build tree packs the same files as a Debian package.
include(CMakePackageConfigHelpers)

install(TARGETS tinygpt_autograd tinygpt_nn tinygpt_optim tinygpt_data tinygpt_io tinygpt_inspect tinygpt_train
                tinygpt_library
        EXPORT tinygptTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS tinygpt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The public headers: every header of the library folders except those in a `detail` or `kernels`
# folder, which are the implementation's own. tinygpt.h includes each public header;
# scripts/consumers.sh checks that, and that each compiles on its own.
install(FILES tinygpt.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tinygpt)
install(DIRECTORY autograd nn optim data io inspect train DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tinygpt
        FILES_MATCHING PATTERN "*.h" PATTERN "*.inc" PATTERN "detail" EXCLUDE PATTERN "kernels" EXCLUDE)

set(TINYGPT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tinygpt)
install(EXPORT tinygptTargets NAMESPACE tinygpt:: DESTINATION ${TINYGPT_CMAKE_DIR})
configure_package_config_file(cmake/tinygptConfig.cmake.in ${PROJECT_BINARY_DIR}/tinygptConfig.cmake
                              INSTALL_DESTINATION ${TINYGPT_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tinygptConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tinygptConfig.cmake ${PROJECT_BINARY_DIR}/tinygptConfigVersion.cmake
        DESTINATION ${TINYGPT_CMAKE_DIR})

if(TINYGPT_TOP_LEVEL)
  set(CPACK_PACKAGE_NAME tinygpt)
  set(CPACK_PACKAGE_VENDOR "tinygpt")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Train, evaluate and sample small GPTs on a CPU; a C++ deep-learning library")
  set(CPACK_PACKAGE_CONTACT "tinygpt developers <tinygpt@localhost>")
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_PACKAGE_SECTION science)
  # The shared libraries the CLI loads (from dpkg-shlibdeps), and what building against the
  # headers and static libraries needs.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libfmt-dev, libtbb-dev, libhdf5-dev")
  if(TINYGPT_WITH_MPI)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libopenmpi-dev")
  endif()
  include(CPack)
endif()
