# Sanitizer variants apply to every target of the build tree (libraries
# included), so that instrumented and plain code never mix in one binary.
if(TENACT_ASAN AND TENACT_TSAN)
  message(FATAL_ERROR "TENACT_ASAN and TENACT_TSAN are exclusive")
endif()
if(TENACT_ASAN)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(TENACT_TSAN)
  # -Wno-tsan: GCC 12 warns that std::atomic_thread_fence (used by Asio's
  # thread pool) is not modelled by TSan; the pool's own synchronisation is
  # mutexes and condition variables, which TSan does model.
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer
                      $<$<CXX_COMPILER_ID:GNU>:-Wno-tsan>)
  add_link_options(-fsanitize=thread)
endif()
if(TENACT_BUILD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TENACT_BUILD_FUZZ needs clang (libFuzzer)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
