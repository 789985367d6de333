# tenact_warnings(target): the warning set every project target compiles with.
# Third-party headers come in as SYSTEM includes and are not affected.
function(tenact_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror)
endfunction()
