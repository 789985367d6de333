# The installable package: `cmake --install BUILD --prefix P` puts
#   P/bin/tenact                       the command (when TENACT_BUILD_TOOLS)
#   P/lib/libtenact_*.a                the libraries (static)
#   P/include/tenact/<folder>/*.hpp    the public headers and every project
#                                      header they include, paths kept
#   P/lib/cmake/Tenact/                TenactConfig.cmake, its version file,
#                                      the exported targets and
#                                      TenactThirdParty.cmake
# and a program uses it with find_package(Tenact REQUIRED) and
# target_link_libraries(app PRIVATE Tenact::tenact) (examples/cpp/).
#
# Tenact::tenact is one umbrella target: the Runtime facade (actors/), the
# CPU and simulated engines, setup/ (engine lists), core/ (the program
# loader, the builder, tensor I/O), the built-in extension module and every
# library these link (in the build tree too, as the alias Tenact::tenact;
# the target is tenact_umbrella because `tenact` is the command). The
# libraries stay static, as in the build tree: shared ones would need an
# exported-symbol and ABI policy the project has no use for yet. A consumer
# then links what the archives use (CAF, OpenBLAS, xxHash: libraries only,
# their headers stay off its compile line), found by the same file Tenact's
# build uses (cmake/TenactThirdParty.cmake).
#
# Included at the end of the top-level CMakeLists.txt, once every target
# exists: what gets exported and which packages TenactConfig.cmake must find
# are read off the targets' link interfaces, so a library or dependency
# added to a folder's CMakeLists.txt is exported (or reported here, when the
# package would not know how to find it) without a change to this file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
include(${CMAKE_CURRENT_LIST_DIR}/TenactHeaders.cmake)

set(TENACT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/Tenact")
set(TENACT_INSTALL_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}/tenact")

include(${CMAKE_CURRENT_LIST_DIR}/TenactPublicHeaders.cmake)

# -- the umbrella target -----------------------------------------------------------
add_library(tenact_umbrella INTERFACE)
set_target_properties(tenact_umbrella PROPERTIES EXPORT_NAME tenact)
target_link_libraries(tenact_umbrella INTERFACE
  tenact_actors tenact_setup tenact_cpu_engine tenact_sim_engine tenact_extensions tenact_core)
target_compile_features(tenact_umbrella INTERFACE cxx_std_20)
add_library(Tenact::tenact ALIAS tenact_umbrella)

# -- what the umbrella links -------------------------------------------------------
# Walks the link interfaces from the umbrella: the project's libraries (each
# exported) and the imported targets and plain names beyond them.
function(_tenact_link_closure out_targets out_external)
  set(pending ${ARGN})
  set(targets "")
  set(external "")
  while(pending)
    list(POP_FRONT pending target)
    if(target IN_LIST targets)
      continue()
    endif()
    list(APPEND targets ${target})
    get_target_property(links ${target} INTERFACE_LINK_LIBRARIES)
    if(NOT links)
      continue()
    endif()
    foreach(item IN LISTS links)
      # A static library's PRIVATE links are $<LINK_ONLY:...> here.
      string(REGEX REPLACE "^\\$<LINK_ONLY:([^$<>]+)>$" "\\1" item "${item}")
      if(item MATCHES "\\$<")
        message(FATAL_ERROR "tenact install: ${target} links '${item}', a generator expression "
                            "cmake/TenactInstall.cmake cannot follow")
      endif()
      if(TARGET ${item})
        get_target_property(aliased ${item} ALIASED_TARGET)
        if(aliased)
          set(item ${aliased})
        endif()
        get_target_property(imported ${item} IMPORTED)
        if(imported)
          list(APPEND external ${item})
        else()
          list(APPEND pending ${item})
        endif()
      else()
        list(APPEND external ${item})
      endif()
    endforeach()
  endwhile()
  list(REMOVE_DUPLICATES external)
  set(${out_targets} "${targets}" PARENT_SCOPE)
  set(${out_external} "${external}" PARENT_SCOPE)
endfunction()

_tenact_link_closure(_tenact_exported _tenact_external tenact_umbrella)

# What TenactConfig.cmake finds, per dependency the libraries link.
set(_tenact_find_dependencies "")
set(_tenact_openssl_components "")
set(_tenact_asio_stub OFF)
set(_tenact_cuda OFF)
foreach(dep IN LISTS _tenact_external)
  if(dep STREQUAL "Threads::Threads" OR dep MATCHES "^(caf::core|tenact_xxhash|tenact_openblas)$")
    # Always found: Threads first, then TenactThirdParty.cmake.
  elseif(dep STREQUAL "nlohmann_json::nlohmann_json")
    string(APPEND _tenact_find_dependencies "find_dependency(nlohmann_json 3.10)\n")
  elseif(dep MATCHES "^OpenSSL::(Crypto|SSL)$")
    list(APPEND _tenact_openssl_components ${CMAKE_MATCH_1})
  elseif(dep STREQUAL "tenact_asio")
    set(_tenact_asio_stub ON)
  elseif(dep MATCHES "^CUDA::(cudart|cublas)$")
    # A build with the CUDA engine: its consumers find the same toolkit.
    set(_tenact_cuda ON)
  elseif(NOT TARGET ${dep} AND dep MATCHES "^-?[A-Za-z0-9_.+-]+$")
    # A plain library name or flag: exported as written.
  else()
    message(FATAL_ERROR "tenact install: the libraries Tenact::tenact brings link '${dep}', which "
                        "the installed package does not know how to find: teach "
                        "cmake/TenactInstall.cmake (and cmake/TenactConfig.cmake.in) about it")
  endif()
endforeach()
if(_tenact_openssl_components)
  list(REMOVE_DUPLICATES _tenact_openssl_components)
  list(JOIN _tenact_openssl_components " " _tenact_components)
  string(APPEND _tenact_find_dependencies "find_dependency(OpenSSL COMPONENTS ${_tenact_components})\n")
endif()
if(_tenact_cuda)
  string(APPEND _tenact_find_dependencies "find_dependency(CUDAToolkit)\n")
endif()
if(_tenact_asio_stub)
  # Asio is header-only and used inside the libraries only: their link
  # interface names it ($<LINK_ONLY:tenact_asio>), which needs no header,
  # only the threads it links.
  string(APPEND _tenact_find_dependencies
    "if(NOT TARGET tenact_asio)\n"
    "  add_library(tenact_asio INTERFACE IMPORTED)\n"
    "  target_link_libraries(tenact_asio INTERFACE Threads::Threads)\n"
    "endif()\n")
endif()
set(TENACT_CONFIG_DEPENDENCIES "${_tenact_find_dependencies}")

# The folders' CMakeLists.txt give each library the source tree as a PUBLIC
# include directory; in the installed package that is P/include/tenact.
foreach(target IN LISTS _tenact_exported)
  get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT dirs)
    continue()
  endif()
  set(kept "")
  foreach(dir IN LISTS dirs)
    string(FIND "${dir}/" "${PROJECT_SOURCE_DIR}/" in_source)
    string(FIND "${dir}/" "${PROJECT_BINARY_DIR}/" in_binary)
    if(in_source EQUAL 0 OR in_binary EQUAL 0)
      list(APPEND kept "$<BUILD_INTERFACE:${dir}>")
    else()
      list(APPEND kept "${dir}")
    endif()
  endforeach()
  set_property(TARGET ${target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${kept}")
endforeach()

# -- install rules -------------------------------------------------------------------
install(TARGETS ${_tenact_exported} EXPORT TenactTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${TENACT_INSTALL_INCLUDEDIR})
install(EXPORT TenactTargets NAMESPACE Tenact:: DESTINATION ${TENACT_INSTALL_CMAKEDIR})

if(TARGET tenact)
  install(TARGETS tenact RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# The headers, computed when installing (cmake/TenactHeaders.cmake).
install(CODE "
  include(\"${PROJECT_SOURCE_DIR}/cmake/TenactHeaders.cmake\")
  tenact_header_closure(_tenact_headers \"${PROJECT_SOURCE_DIR}\" ${TENACT_PUBLIC_HEADERS})
  foreach(_tenact_header IN LISTS _tenact_headers)
    get_filename_component(_tenact_folder \"\${_tenact_header}\" DIRECTORY)
    file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${TENACT_INSTALL_INCLUDEDIR}/\${_tenact_folder}\"
         TYPE FILE FILES \"${PROJECT_SOURCE_DIR}/\${_tenact_header}\")
  endforeach()
")

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/TenactConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/TenactConfig.cmake
  INSTALL_DESTINATION ${TENACT_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/TenactConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/package/TenactConfig.cmake
  ${PROJECT_BINARY_DIR}/package/TenactConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/TenactThirdParty.cmake
  DESTINATION ${TENACT_INSTALL_CMAKEDIR})
