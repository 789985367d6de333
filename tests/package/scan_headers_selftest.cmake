# cmake -DSCAN=scan_headers.cmake -DBAD_ROOT=scan_selftest -P scan_headers_selftest.cmake
# The header scan must fail on BAD_ROOT, reporting each planted fault (a
# missing public header, a CAF include, a project header not installed, a
# third-party header) and nothing about the headers that are fine.
cmake_minimum_required(VERSION 3.18)
execute_process(COMMAND "${CMAKE_COMMAND}" -DINCLUDE_ROOT=${BAD_ROOT} -DPUBLIC_HEADERS=good/ok.hpp,missing/public.hpp
                        -P "${SCAN}"
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(result EQUAL 0)
  message(FATAL_ERROR "the scan passed a tree with planted faults:\n${output}")
endif()
foreach(expected
    "public header missing/public.hpp is not installed"
    "bad/uses_caf.hpp: includes the CAF header caf/all.hpp"
    "bad/uses_planning.hpp: includes \"planning/not_installed.hpp\", a header that is not installed"
    "bad/uses_json.hpp: includes <nlohmann/json.hpp>, neither a standard header nor an installed one")
  string(FIND "${output}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the scan did not report '${expected}':\n${output}")
  endif()
endforeach()
if(output MATCHES "good/")
  message(FATAL_ERROR "the scan reported a header that is fine:\n${output}")
endif()
