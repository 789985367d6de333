# All third-party dependencies, found once. Debian 12 packages; see README.md.
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)

# xxHash ships no CMake config.
find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_library(XXHASH_LIBRARY xxhash REQUIRED)
add_library(tenact_xxhash INTERFACE IMPORTED)
target_include_directories(tenact_xxhash SYSTEM INTERFACE ${XXHASH_INCLUDE_DIR})
target_link_libraries(tenact_xxhash INTERFACE ${XXHASH_LIBRARY})

# CAF 0.17.6: Debian's libcaf-dev ships neither a CMake config nor pkg-config.
# TENACT_CAF_ROOT names another installation of the same version (the
# ThreadSanitizer variant uses one built from Debian's source with
# -fsanitize=thread, scripts/build-caf-tsan.sh); headers and library then come
# from there only, so the two never mix.
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

# Asio (standalone, header only).
find_path(ASIO_INCLUDE_DIR asio.hpp REQUIRED)
add_library(tenact_asio INTERFACE IMPORTED)
target_include_directories(tenact_asio SYSTEM INTERFACE ${ASIO_INCLUDE_DIR})
target_compile_definitions(tenact_asio INTERFACE ASIO_STANDALONE)
target_link_libraries(tenact_asio INTERFACE Threads::Threads)

# OpenBLAS (the pthread variant Debian selects through alternatives).
find_path(CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas-pthread REQUIRED)
find_library(OPENBLAS_LIBRARY NAMES openblas REQUIRED)
add_library(tenact_openblas INTERFACE IMPORTED)
target_include_directories(tenact_openblas SYSTEM INTERFACE ${CBLAS_INCLUDE_DIR})
target_link_libraries(tenact_openblas INTERFACE ${OPENBLAS_LIBRARY})

# CUDA: optional; only the CUDA engine target depends on it.
set(TENACT_HAVE_CUDA OFF)
if(TENACT_BUILD_CUDA AND NOT TENACT_ASAN AND NOT TENACT_TSAN)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cublas)
    set(TENACT_HAVE_CUDA ON)
    message(STATUS "tenact: CUDA toolkit ${CUDAToolkit_VERSION} found; building the CUDA engine")
  else()
    message(STATUS "tenact: CUDA toolkit with cuBLAS not found; the CUDA engine is skipped")
  endif()
endif()

if(TENACT_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
  include(Catch)
endif()
if(TENACT_BUILD_BENCH)
  find_package(benchmark QUIET)
endif()

# Debian's python3 with NumPy: the independent oracle of the tests.
find_program(TENACT_NUMPY_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
