# Install rules (BP_INSTALL, on when this is the top-level project): the
# three binaries into bin/, the shipped configs into
# share/backpressure/configs/ (where an installed loadgen finds workloads by
# name), and the gate client for other CMake projects:
#   find_package(Backpressure REQUIRED)
#   target_link_libraries(app PRIVATE bp::gate)
# bp::gate and bp::base are static libraries with their public headers under
# include/bp/; BackpressureConfig.cmake finds what they link (Threads,
# hiredis through pkg-config, spdlog, nlohmann_json) with find_dependency.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(BP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Backpressure)

install(TARGETS bp_base bp_valkey bp_gate EXPORT BackpressureTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/base/include/ ${PROJECT_SOURCE_DIR}/lib/valkey/include/
  ${PROJECT_SOURCE_DIR}/lib/gate/include/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT BackpressureTargets NAMESPACE bp:: DESTINATION ${BP_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/BackpressureConfig.cmake.in
  ${PROJECT_BINARY_DIR}/BackpressureConfig.cmake INSTALL_DESTINATION ${BP_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/BackpressureConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/BackpressureConfig.cmake
  ${PROJECT_BINARY_DIR}/BackpressureConfigVersion.cmake DESTINATION ${BP_CMAKE_DIR})

foreach(app mockapi loadgen bpctl)
  if(TARGET ${app})
    install(TARGETS ${app} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/backpressure/configs)
