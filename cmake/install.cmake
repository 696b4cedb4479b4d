# `cmake --install`: what a plugin author or an application needs to build
# against plugrt and run it, laid out by GNUInstallDirs:
#
#   bin/plugrt                          the program
#   lib/libplugrt.so*                   the library (plugrt.h)
#   lib/libplugrt_plugins.so*           the standard plugin library (and its
#                                       CUDA module, with CUDA)
#   lib/libplugrt_onnx.so*              the ONNX importer (onnx.h), when built
#   include/plugrt/{plugrt,plugin,version}.h
#   lib/cmake/plugrt/                   find_package(plugrt): plugrt::plugrt,
#                                       plugrt::plugin_headers, plugrt::cli,
#                                       plugrt::onnx
#   lib/pkgconfig/plugrt.pc             cflags and -lplugrt
#   lib/pkgconfig/plugrt-plugin.pc      cflags only: a plugin needs no library
#   lib/pkgconfig/plugrt-onnx.pc        the importer, when built
#
# The program finds libplugrt through its RUNPATH and the standard plugins in
# the same lib directory (tools/common.c), so an installed tree can be moved.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PRT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/plugrt)

# A plugin is built against plugin.h alone: an interface target of headers.
add_library(plugrt_plugin_headers INTERFACE)
target_include_directories(plugrt_plugin_headers INTERFACE
  $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
  $<BUILD_INTERFACE:${PRT_GENERATED_INCLUDE}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(plugrt_plugin_headers PROPERTIES EXPORT_NAME plugin_headers)
add_library(plugrt::plugin_headers ALIAS plugrt_plugin_headers)
add_library(plugrt::plugrt ALIAS plugrt)

install(TARGETS plugrt plugrt_plugin_headers EXPORT plugrtTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS plugrt_plugins LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET plugrt_plugins_cuda)
  install(TARGETS plugrt_plugins_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
# The ONNX importer, shared (plugrt::onnx, onnx.h), when this build has it.
if(TARGET plugrt_onnx_shared)
  target_include_directories(plugrt_onnx_shared INTERFACE
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  install(TARGETS plugrt_onnx_shared EXPORT plugrtTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES ${CMAKE_SOURCE_DIR}/include/plugrt/onnx.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/plugrt)
endif()
install(FILES ${CMAKE_SOURCE_DIR}/include/plugrt/plugrt.h
              ${CMAKE_SOURCE_DIR}/include/plugrt/plugin.h
              ${PRT_GENERATED_INCLUDE}/plugrt/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/plugrt)

if(TARGET plugrt_cli)
  file(RELATIVE_PATH PRT_LIB_FROM_BIN ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}
       ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR})
  if(PRT_LIB_FROM_BIN STREQUAL "")
    set(PRT_LIB_FROM_BIN .)
  endif()
  target_compile_definitions(plugrt_cli PRIVATE PRT_PLUGINS_FROM_BIN="${PRT_LIB_FROM_BIN}")
  set_target_properties(plugrt_cli PROPERTIES EXPORT_NAME cli
                        INSTALL_RPATH "\$ORIGIN/${PRT_LIB_FROM_BIN}")
  install(TARGETS plugrt_cli EXPORT plugrtTargets
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT plugrtTargets NAMESPACE plugrt:: DESTINATION ${PRT_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/plugrtConfig.cmake.in
  ${CMAKE_BINARY_DIR}/plugrtConfig.cmake INSTALL_DESTINATION ${PRT_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_LIBDIR)
# While the major version is 0 a minor release may break the ABI (the
# soname says so too): a request for 0.1 is met by 0.1.x only.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/plugrtConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/plugrtConfig.cmake
              ${CMAKE_BINARY_DIR}/plugrtConfigVersion.cmake
        DESTINATION ${PRT_CMAKE_DIR})

# pkg-config files name their prefix from where they lie (${pcfiledir}), so
# they hold no absolute path.
file(RELATIVE_PATH PRT_PC_TO_PREFIX
     ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" PRT_PC_TO_PREFIX "${PRT_PC_TO_PREFIX}")
set(PRT_PC_FILES plugrt plugrt-plugin)
if(TARGET plugrt_onnx_shared)
  list(APPEND PRT_PC_FILES plugrt-onnx)
endif()
foreach(pc ${PRT_PC_FILES})
  configure_file(${CMAKE_SOURCE_DIR}/cmake/${pc}.pc.in ${CMAKE_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/${pc}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
