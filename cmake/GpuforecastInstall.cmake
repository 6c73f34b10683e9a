include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(GPUFORECAST_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpuforecast)
set(_targets gpuforecast)
if(TARGET gpuforecast_cuda)
  list(APPEND _targets gpuforecast_cuda)
endif()
if(TARGET gpuforecast_farm)
  # MPI stays private: libgpuforecast_farm.so links it, its headers do not include mpi.h.
  list(APPEND _targets gpuforecast_farm)
endif()
if(TARGET gpuforecast_transformer)
  list(APPEND _targets gpuforecast_transformer)  # installed beside libgpuforecast.so, which loads it
endif()
install(TARGETS ${_targets} EXPORT gpuforecastTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# detail/ folders hold the library's own seams (the driver table tests replace, the measurement
# loop): shared by src/ and tests/, never installed, so no installed header declares a test seam
# (tests/cmake/check_installed_headers.cmake checks the installed tree).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/gpuforecast DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  PATTERN detail EXCLUDE)
install(EXPORT gpuforecastTargets NAMESPACE gpuforecast:: DESTINATION ${GPUFORECAST_INSTALL_CMAKEDIR})
export(EXPORT gpuforecastTargets NAMESPACE gpuforecast:: FILE ${PROJECT_BINARY_DIR}/gpuforecastTargets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gpuforecast-config.cmake.in
  ${PROJECT_BINARY_DIR}/gpuforecast-config.cmake INSTALL_DESTINATION ${GPUFORECAST_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gpuforecast-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gpuforecast-config.cmake ${PROJECT_BINARY_DIR}/gpuforecast-config-version.cmake
  DESTINATION ${GPUFORECAST_INSTALL_CMAKEDIR})
