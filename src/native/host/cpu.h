// Which SIMD path the kernels take, picked at run time from cpuid (and the OS's saved register state,
// xgetbv), never at build time: the addon is compiled once for the baseline and carries all paths.
#pragma once

namespace host {

enum class Isa : int { Scalar = 0,
                       Avx2 = 1,
                       Avx512 = 2 };

// True when this CPU and OS can run `isa` (Scalar always). AVX2 means AVX2 + FMA + F16C; AVX-512
// means F, BW, DQ, VL and VNNI as well (VNNI for matmul_wq's integer dot products: a CPU with
// AVX-512 but no VNNI takes the AVX2 path).
bool isaSupported(Isa isa);

// The widest supported path.
Isa bestIsa();

const char* isaName(Isa isa);

// "scalar", "avx2" or "avx512"; false for anything else.
bool parseIsa(const char* s, Isa* out);

}  // namespace host
