# cmake --install: the programs in bin/, nepplugin.so (and nepplugin_train.so, fix nep/train) in
# lib/lammps-nep/plugins/ (the folder to name
# in LAMMPS_PLUGIN_PATH: LAMMPS >= 4May2022 loads every *plugin.so in it at start-up), the core's
# headers in include/nep/, and the libraries with a CMake package (find_package(lammps_nep)) whose
# imported targets are lammps_nep::nep_core and, when built, lammps_nep::nep_data (HDF5 frame store)
# and lammps_nep::nep_train (trainer, LibTorch; with lammps_nep::nep_train_kernels, its kernels).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(NEP_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/lammps_nep)
set(NEP_INSTALL_PLUGINDIR ${CMAKE_INSTALL_LIBDIR}/lammps-nep/plugins)

# installed programs and the plugin find the libraries they were linked against (Kokkos, LibTorch,
# HDF5) where they were at build time, without LD_LIBRARY_PATH
set(_nep_programs nep-predict)
foreach(program nep-frames nep-train)
  if(TARGET ${program})
    list(APPEND _nep_programs ${program})
  endif()
endforeach()
set_target_properties(${_nep_programs} PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS ${_nep_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET nepplugin)
  set_target_properties(nepplugin PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
  install(TARGETS nepplugin LIBRARY DESTINATION ${NEP_INSTALL_PLUGINDIR})
  if(TARGET nepplugin_train)   # fix nep/train, loaded by nepplugin.so from its own folder
    set_target_properties(nepplugin_train PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
    install(TARGETS nepplugin_train LIBRARY DESTINATION ${NEP_INSTALL_PLUGINDIR})
  endif()
endif()

if(NOT NEP_CORE_LIBRARY)   # (a prebuilt core is not this build's to install)
  # each library's headers with it: include/nep/ the core's, nep/data/ and nep/train/ only when built
  install(DIRECTORY include/nep DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN data EXCLUDE PATTERN train EXCLUDE)
  if(TARGET nep_data)
    install(DIRECTORY include/nep/data DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/nep)
  endif()
  if(TARGET nep_train)
    install(DIRECTORY include/nep/train DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/nep)
  endif()
  target_include_directories(nep_core PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  set(_nep_libraries nep_core)
  if(TARGET nep_data)
    list(APPEND _nep_libraries nep_data)
  endif()
  set(NEP_CONFIG_DATA OFF)
  if(TARGET nep_data)
    set(NEP_CONFIG_DATA ON)
  endif()
  set(NEP_CONFIG_TORCH_PACKAGE OFF)
  set(NEP_CONFIG_TRAIN OFF)
  set(NEP_CONFIG_MPI OFF)
  if(TARGET nep_train)
    set(NEP_CONFIG_TRAIN ON)
    # nep_torch carries LibTorch's libraries to whoever links the static trainer; nep_train_kernels
    # (its forward and gradient kernels, headers in include/nep/train/) goes with it
    list(APPEND _nep_libraries nep_train nep_train_kernels nep_torch)
    if(NOT NEP_TORCH_LIBRARIES)
      set(NEP_CONFIG_TORCH_PACKAGE ON)   # the targets name find_package(Torch)'s imported targets
    endif()
    if(MPI_C_FOUND)
      set(NEP_CONFIG_MPI ON)
    endif()
  endif()
  install(TARGETS ${_nep_libraries} EXPORT lammps_nep_targets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT lammps_nep_targets NAMESPACE lammps_nep:: DESTINATION ${NEP_INSTALL_CMAKEDIR})
  # the Kokkos the core was built with: the consumer's find_dependency(Kokkos) starts there
  set(NEP_CONFIG_KOKKOS_DIR ${Kokkos_DIR})
  configure_package_config_file(cmake/lammps_nepConfig.cmake.in ${PROJECT_BINARY_DIR}/lammps_nepConfig.cmake
                                INSTALL_DESTINATION ${NEP_INSTALL_CMAKEDIR} PATH_VARS NEP_INSTALL_PLUGINDIR)
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/lammps_nepConfigVersion.cmake
                                   COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/lammps_nepConfig.cmake ${PROJECT_BINARY_DIR}/lammps_nepConfigVersion.cmake
          DESTINATION ${NEP_INSTALL_CMAKEDIR})
endif()
