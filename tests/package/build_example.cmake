# cmake -DPREFIX=P -DSOURCE=examples/cpp/NAME -DBINARY=DIR -DEXECUTABLE=NAME
#       -DGENERATOR=Ninja -DCXX=c++ [-DARGS=a,b] [-DWORKING_DIRECTORY=D] -P build_example.cmake
# Configures SOURCE (a project with find_package(Tenact REQUIRED)) against
# the package installed in P, in Release and with warnings as errors, builds
# it (-j2) and runs EXECUTABLE with ARGS (comma-separated); fails when a step
# fails, when find_package found Tenact anywhere but in P, or when the
# program exits non-zero (the examples check their own results).
cmake_minimum_required(VERSION 3.18)
foreach(var PREFIX SOURCE BINARY EXECUTABLE GENERATOR CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "build_example.cmake: ${var} is not set")
  endif()
endforeach()

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${what} failed (${result}):\n${output}")
  endif()
endfunction()

file(REMOVE_RECURSE "${BINARY}")
step("configuring ${SOURCE}"
  "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${BINARY}" -G "${GENERATOR}"
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX}
  "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Wpedantic -Werror"
  -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)

file(STRINGS "${BINARY}/CMakeCache.txt" found REGEX "^Tenact_DIR:")
string(REGEX REPLACE "^Tenact_DIR:[A-Z]+=" "" found "${found}")
get_filename_component(found "${found}" REALPATH)
get_filename_component(prefix "${PREFIX}" REALPATH)
string(FIND "${found}" "${prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "find_package(Tenact) found ${found}, not the package installed in ${prefix}")
endif()

step("building ${SOURCE}" "${CMAKE_COMMAND}" --build "${BINARY}" -j 2)

string(REPLACE "," ";" args "${ARGS}")
if(NOT DEFINED WORKING_DIRECTORY)
  set(WORKING_DIRECTORY "${BINARY}")
endif()
execute_process(COMMAND "${BINARY}/${EXECUTABLE}" ${args} WORKING_DIRECTORY "${WORKING_DIRECTORY}"
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} ${args} exited with ${result}")
endif()
