# tenact_warnings(target): the warning set every project target compiles with.
# Third-party headers come in as SYSTEM includes and are not affected.
#
# -Wno-restrict on GCC: GCC 12 at -O3 reports false -Wrestrict errors inside
# libstdc++'s std::string operator+ (GCC bugs 105329 and 105651); the code
# it points at is the standard library's, not ours.
#
# -ffp-contract=off: g++ contracts a*b+c into one fused multiply-add in C++
# whenever the target has FMA (ISO mode does not stop it; only C's does),
# which would change results by an ulp between builds (-march=native,
# -mfma, target("avx512f") functions). The program format rounds every op
# to its dtype, so no contraction anywhere.
function(tenact_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror -ffp-contract=off
                         $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
endfunction()
