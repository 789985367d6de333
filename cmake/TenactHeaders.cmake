# tenact_header_closure(OUT ROOT HEADER...): the headers HEADER... (paths
# relative to ROOT, the source tree) and every project header they include,
# directly or not, sorted. A project header is an include that names a file
# under ROOT, as the project writes them: relative to the root
# ("core/tensor.hpp"), or relative to the including file's folder. Anything
# else (standard and third-party headers) is left out; whether the public
# headers may include it is tests/package/scan_headers.cmake's question.
#
# Used at install time (cmake/TenactInstall.cmake), so the installed set
# follows the headers as they are when installing, without a new configure.
# Works in script mode (cmake -P, cmake_install.cmake) as well as in a
# project, under any policy settings.
function(tenact_header_closure out root)
  set(pending ${ARGN})
  set(found "")
  while(pending)
    list(POP_FRONT pending header)
    list(FIND found "${header}" seen)
    if(NOT seen EQUAL -1)
      continue()
    endif()
    if(NOT EXISTS "${root}/${header}")
      message(FATAL_ERROR "tenact: public header ${header} does not exist under ${root}")
    endif()
    list(APPEND found "${header}")
    get_filename_component(folder "${header}" DIRECTORY)
    file(STRINGS "${root}/${header}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    foreach(line IN LISTS lines)
      if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]")
        continue()
      endif()
      set(named "${CMAKE_MATCH_1}")
      if(folder AND EXISTS "${root}/${folder}/${named}" AND NOT IS_DIRECTORY "${root}/${folder}/${named}")
        file(RELATIVE_PATH named "${root}" "${root}/${folder}/${named}")
        list(APPEND pending "${named}")
      elseif(EXISTS "${root}/${named}" AND NOT IS_DIRECTORY "${root}/${named}")
        list(APPEND pending "${named}")
      endif()
    endforeach()
  endwhile()
  list(SORT found)
  set(${out} "${found}" PARENT_SCOPE)
endfunction()
