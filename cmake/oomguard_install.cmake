# `cmake --install build [--prefix P]`: headers, the part libraries as oomguard::<part>, the CLI,
# the PyTorch plug-in and a CMake package, so that another project can write
#   find_package(oomguard REQUIRED)
#   target_link_libraries(app PRIVATE oomguard::mr)
# The libraries are static; their Debian dependencies (libonnx-dev, libre2-dev, ...) are found
# again by oomguardConfig.cmake. Included from the top-level CMakeLists.txt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(OOMGUARD_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/oomguard)
set(oomguard_exported)
foreach(part core plan fit mr feed explain doctor)
  if(NOT TARGET oomguard_${part})
    continue()
  endif()
  # The parts name ${PROJECT_SOURCE_DIR}/include as a plain path; installed, the headers
  # live under the prefix's include/ instead.
  set_target_properties(oomguard_${part} PROPERTIES
    EXPORT_NAME ${part}
    INTERFACE_INCLUDE_DIRECTORIES "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>")
  add_library(oomguard::${part} ALIAS oomguard_${part})
  list(APPEND oomguard_exported oomguard_${part})
endforeach()

install(TARGETS ${oomguard_exported} EXPORT oomguardTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/oomguard DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS oomguard RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_BINARY_DIR}/oomguard.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
if(TARGET oomguard_torch)
  install(TARGETS oomguard_torch LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(EXPORT oomguardTargets NAMESPACE oomguard:: DESTINATION ${OOMGUARD_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/oomguardConfig.cmake.in
  ${PROJECT_BINARY_DIR}/oomguardConfig.cmake INSTALL_DESTINATION ${OOMGUARD_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/oomguardConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/oomguardConfig.cmake ${PROJECT_BINARY_DIR}/oomguardConfigVersion.cmake
  DESTINATION ${OOMGUARD_INSTALL_CMAKEDIR})

# The installed tree works for a stranger: install to a temporary prefix, build and run
# cmake/consumer (find_package(oomguard), oomguard::mr) against it.
if(OOMGUARD_BUILD_TESTS AND OOMGUARD_SANITIZE STREQUAL "" AND NOT OOMGUARD_FUZZ)
  add_test(NAME install_consumer_builds_against_installed_tree
    COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}/consumer
            -DWORK_DIR=${PROJECT_BINARY_DIR}/consumer_test -DGENERATOR=${CMAKE_GENERATOR}
            "-DPYTHON=$<$<TARGET_EXISTS:oomguard_python>:${Python3_EXECUTABLE}>" -DPYTHON_DIR=${OOMGUARD_PYTHON_INSTALL_DIR}
            -P ${CMAKE_CURRENT_LIST_DIR}/consumer/run_consumer_test.cmake)
  set_tests_properties(install_consumer_builds_against_installed_tree PROPERTIES LABELS install TIMEOUT 600)
endif()
