# All third-party dependencies, found once. Debian 12 packages; see README.md.
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)

# xxHash, CAF and OpenBLAS ship no CMake config: found by one file that the
# installed package uses too (TenactConfig.cmake), so that programs built
# against an installed Tenact find them the same way.
include(${CMAKE_CURRENT_LIST_DIR}/TenactThirdParty.cmake)

# Asio (standalone, header only).
find_path(ASIO_INCLUDE_DIR asio.hpp REQUIRED)
add_library(tenact_asio INTERFACE IMPORTED)
target_include_directories(tenact_asio SYSTEM INTERFACE ${ASIO_INCLUDE_DIR})
target_compile_definitions(tenact_asio INTERFACE ASIO_STANDALONE)
target_link_libraries(tenact_asio INTERFACE Threads::Threads)

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
