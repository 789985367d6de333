# cmake -DBUILD_DIR=B -DPREFIX=P -DLIBDIR=lib -DINCLUDEDIR=include -DBINDIR=bin
#       -DSOURCE_DIR=S [-DTOOL=ON] -P install_package.cmake
# Installs the build tree B into a fresh prefix P (`cmake --install`), then
# checks the layout: the libraries, the package files, the public headers
# and, with TOOL, the tenact command, which must run from there
# (`tenact check` on examples/mlp/mlp.json).
cmake_minimum_required(VERSION 3.18)
foreach(var BUILD_DIR PREFIX LIBDIR INCLUDEDIR BINDIR SOURCE_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_package.cmake: ${var} is not set")
  endif()
endforeach()

file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${PREFIX} failed (${result}):\n${output}")
endif()

set(missing "")
foreach(file
    ${LIBDIR}/libtenact_core.a ${LIBDIR}/libtenact_actors.a ${LIBDIR}/libtenact_cpu_engine.a
    ${LIBDIR}/libtenact_sim_engine.a ${LIBDIR}/libtenact_setup.a ${LIBDIR}/libtenact_extensions.a
    ${LIBDIR}/cmake/Tenact/TenactConfig.cmake ${LIBDIR}/cmake/Tenact/TenactConfigVersion.cmake
    ${LIBDIR}/cmake/Tenact/TenactTargets.cmake ${LIBDIR}/cmake/Tenact/TenactThirdParty.cmake
    ${INCLUDEDIR}/tenact/actors/runtime.hpp ${INCLUDEDIR}/tenact/core/extension.hpp
    ${INCLUDEDIR}/tenact/setup/engine_setup.hpp ${INCLUDEDIR}/tenact/extensions/builtin_extensions.hpp)
  if(NOT EXISTS "${PREFIX}/${file}")
    list(APPEND missing "${file}")
  endif()
endforeach()
if(TOOL AND NOT EXISTS "${PREFIX}/${BINDIR}/tenact")
  list(APPEND missing "${BINDIR}/tenact")
endif()
if(missing)
  list(JOIN missing "\n  " missing)
  message(FATAL_ERROR "the install into ${PREFIX} lacks\n  ${missing}\ncmake --install said:\n${output}")
endif()

if(TOOL)
  execute_process(COMMAND "${PREFIX}/${BINDIR}/tenact" check "${SOURCE_DIR}/examples/mlp/mlp.json"
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "the installed tenact check examples/mlp/mlp.json failed (${result}):\n${output}")
  endif()
endif()
message(STATUS "installed into ${PREFIX}")
