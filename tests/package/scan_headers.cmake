# cmake -DINCLUDE_ROOT=P/include/tenact -DPUBLIC_HEADERS=a.hpp,b/c.hpp -P scan_headers.cmake
# Checks the installed headers of the package are self-contained for a
# program that has only INCLUDE_ROOT on its include path and no CAF:
#   - every public header (PUBLIC_HEADERS, comma-separated) is installed;
#   - every #include "..." of an installed header names an installed
#     header (the project writes them from the source root; relative to the
#     including file's folder is accepted too);
#   - every #include <...> is a C++ standard header or an installed header;
#     a third-party header (CAF's caf/..., nlohmann/..., asio, cblas.h,
#     xxhash.h) is an error: consumers would need it and TenactConfig.cmake
#     does not provide it. CAF's headers sit in /usr/include, on every
#     compiler's path, so only this scan can tell.
# Fails listing every offending line.
cmake_minimum_required(VERSION 3.18)
if(NOT DEFINED INCLUDE_ROOT OR NOT DEFINED PUBLIC_HEADERS)
  message(FATAL_ERROR "scan_headers.cmake: INCLUDE_ROOT and PUBLIC_HEADERS must be set")
endif()

# C++20's standard library headers and the C library's <cxxx> forms.
set(standard
  algorithm any array atomic barrier bit bitset charconv chrono codecvt compare complex concepts
  condition_variable coroutine deque exception execution filesystem format forward_list fstream
  functional future initializer_list iomanip ios iosfwd iostream istream iterator latch limits list
  locale map memory memory_resource mutex new numbers numeric optional ostream queue random ranges
  ratio regex scoped_allocator semaphore set shared_mutex source_location span sstream stack
  stdexcept stop_token streambuf string string_view syncstream system_error thread tuple
  type_traits typeindex typeinfo unordered_map unordered_set utility valarray variant vector version
  cassert cctype cerrno cfenv cfloat cinttypes climits clocale cmath csetjmp csignal cstdarg cstddef
  cstdint cstdio cstdlib cstring ctime cuchar cwchar cwctype)

set(problems "")
string(REPLACE "," ";" public "${PUBLIC_HEADERS}")
foreach(header IN LISTS public)
  if(NOT EXISTS "${INCLUDE_ROOT}/${header}")
    list(APPEND problems "public header ${header} is not installed")
  endif()
endforeach()

file(GLOB_RECURSE installed RELATIVE "${INCLUDE_ROOT}" "${INCLUDE_ROOT}/*")
list(LENGTH installed count)
if(count EQUAL 0)
  message(FATAL_ERROR "no headers under ${INCLUDE_ROOT}")
endif()
foreach(header IN LISTS installed)
  get_filename_component(folder "${header}" DIRECTORY)
  file(STRINGS "${INCLUDE_ROOT}/${header}" lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]+)[>\"]")
      list(APPEND problems "${header}: an include this scan cannot read: ${line}")
      continue()
    endif()
    set(quote "${CMAKE_MATCH_1}")
    set(named "${CMAKE_MATCH_2}")
    if(named MATCHES "^caf/")
      list(APPEND problems "${header}: includes the CAF header ${named} (public headers are CAF-free)")
    elseif(EXISTS "${INCLUDE_ROOT}/${named}" AND NOT IS_DIRECTORY "${INCLUDE_ROOT}/${named}")
      # An installed header, named from the root.
    elseif(quote STREQUAL "\"" AND folder AND EXISTS "${INCLUDE_ROOT}/${folder}/${named}")
      # An installed header next to the including one.
    elseif(quote STREQUAL "\"")
      list(APPEND problems "${header}: includes \"${named}\", a header that is not installed")
    elseif(NOT named IN_LIST standard)
      list(APPEND problems "${header}: includes <${named}>, neither a standard header nor an installed one")
    endif()
  endforeach()
endforeach()

if(problems)
  list(JOIN problems "\n  " problems)
  message(FATAL_ERROR "installed headers under ${INCLUDE_ROOT}:\n  ${problems}")
endif()
message(STATUS "${count} installed headers: every include is installed or standard, none is CAF's")
