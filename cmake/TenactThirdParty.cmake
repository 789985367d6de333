# The three libraries Tenact links that ship no CMake config: xxHash, CAF
# 0.17.6 and OpenBLAS. One definition, used by the project
# (cmake/Dependencies.cmake) and by the installed package (TenactConfig.cmake
# includes the installed copy of this file), so that a program built against
# an installed Tenact finds them exactly as Tenact's own build did.
#
# Defines the imported targets tenact_xxhash, caf::core and tenact_openblas
# (the names the libraries' link interfaces carry; the installed
# TenactTargets.cmake refers to them). Expects Threads::Threads (callers
# find Threads first). Safe to include more than once.

# xxHash.
if(NOT TARGET tenact_xxhash)
  find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
  find_library(XXHASH_LIBRARY xxhash REQUIRED)
  add_library(tenact_xxhash INTERFACE IMPORTED)
  target_include_directories(tenact_xxhash SYSTEM INTERFACE ${XXHASH_INCLUDE_DIR})
  target_link_libraries(tenact_xxhash INTERFACE ${XXHASH_LIBRARY})
endif()

# CAF 0.17.6: Debian's libcaf-dev ships neither a CMake config nor pkg-config.
# TENACT_CAF_ROOT names another installation of the same version (the
# ThreadSanitizer variant uses one built from Debian's source with
# -fsanitize=thread, scripts/build-caf-tsan.sh); headers and library then come
# from there only, so the two never mix.
if(NOT TARGET caf::core)
  set(TENACT_CAF_ROOT "" CACHE PATH "Use the CAF 0.17.6 installed under this prefix instead of the system's")
  if(NOT "${TENACT_CAF_ROOT}" STREQUAL "${TENACT_CAF_ROOT_FOUND}")
    unset(CAF_INCLUDE_DIR CACHE)
    unset(CAF_CORE_LIBRARY CACHE)
    set(TENACT_CAF_ROOT_FOUND "${TENACT_CAF_ROOT}" CACHE INTERNAL "TENACT_CAF_ROOT the CAF paths were found for")
  endif()
  if(TENACT_CAF_ROOT)
    find_path(CAF_INCLUDE_DIR caf/all.hpp PATHS "${TENACT_CAF_ROOT}/include" NO_DEFAULT_PATH REQUIRED)
    find_library(CAF_CORE_LIBRARY caf_core PATHS "${TENACT_CAF_ROOT}/lib" NO_DEFAULT_PATH REQUIRED)
    message(STATUS "tenact: CAF from ${TENACT_CAF_ROOT}")
  else()
    find_path(CAF_INCLUDE_DIR caf/all.hpp REQUIRED)
    find_library(CAF_CORE_LIBRARY caf_core REQUIRED)
  endif()
  add_library(caf::core INTERFACE IMPORTED)
  target_include_directories(caf::core SYSTEM INTERFACE ${CAF_INCLUDE_DIR})
  target_link_libraries(caf::core INTERFACE ${CAF_CORE_LIBRARY} Threads::Threads)
endif()

# OpenBLAS (the pthread variant Debian selects through alternatives).
if(NOT TARGET tenact_openblas)
  find_path(CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas-pthread REQUIRED)
  find_library(OPENBLAS_LIBRARY NAMES openblas REQUIRED)
  add_library(tenact_openblas INTERFACE IMPORTED)
  target_include_directories(tenact_openblas SYSTEM INTERFACE ${CBLAS_INCLUDE_DIR})
  target_link_libraries(tenact_openblas INTERFACE ${OPENBLAS_LIBRARY})
endif()
