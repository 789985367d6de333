# The API reference: `ninja docs` runs Doxygen (Debian's doxygen package,
# scripts/install-deps.sh) over the public headers
# (cmake/TenactPublicHeaders.cmake), with docs/guide.md as its main page
# and docs/Doxyfile.in's settings, into BUILD/docs/reference/html; a
# warning fails it. Only where Doxygen is found; the test docs_reference
# builds it, so CI checks the reference (release variant only: the
# sanitizer variants check code, not comments).
include(${CMAKE_CURRENT_LIST_DIR}/TenactPublicHeaders.cmake)

find_package(Doxygen QUIET)
if(NOT DOXYGEN_FOUND)
  message(STATUS "tenact: doxygen not found; no docs target")
  return()
endif()

set(TENACT_DOCS_OUTPUT "${PROJECT_BINARY_DIR}/docs/reference")
# The guide is the reference's main page.
set(TENACT_DOCS_MAINPAGE "${PROJECT_SOURCE_DIR}/docs/guide.md")
set(TENACT_DOCS_INPUT "\"${TENACT_DOCS_MAINPAGE}\"")
foreach(header IN LISTS TENACT_PUBLIC_HEADERS)
  string(APPEND TENACT_DOCS_INPUT " \"${PROJECT_SOURCE_DIR}/${header}\"")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${PROJECT_BINARY_DIR}/docs/Doxyfile @ONLY)

list(TRANSFORM TENACT_PUBLIC_HEADERS PREPEND "${PROJECT_SOURCE_DIR}/" OUTPUT_VARIABLE _tenact_docs_sources)
add_custom_target(docs
  COMMAND ${CMAKE_COMMAND} -E make_directory ${TENACT_DOCS_OUTPUT}
  COMMAND Doxygen::doxygen ${PROJECT_BINARY_DIR}/docs/Doxyfile
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
  COMMENT "API reference (Doxygen) in ${TENACT_DOCS_OUTPUT}/html"
  SOURCES ${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${TENACT_DOCS_MAINPAGE} ${_tenact_docs_sources}
  VERBATIM)

if(TENACT_BUILD_TESTS AND NOT TENACT_ASAN AND NOT TENACT_TSAN)
  # Builds the target in this build tree (it runs Doxygen only: nothing
  # else is rebuilt).
  add_test(NAME docs_reference COMMAND ${CMAKE_COMMAND} --build ${PROJECT_BINARY_DIR} --target docs)
  set_tests_properties(docs_reference PROPERTIES TIMEOUT 300)
endif()
