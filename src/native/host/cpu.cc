#include "cpu.h"

#include <cstring>
#include <initializer_list>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define HOST_X86 1
#endif

namespace host {
namespace {

struct Features {
  bool avx2 = false;
  bool avx512 = false;
};

#ifdef HOST_X86
unsigned long long xgetbv0() {
  unsigned eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}
#endif

Features detect() {
  Features f;
#ifdef HOST_X86
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = c & (1u << 27);
  const bool fma = c & (1u << 12);
  const bool f16c = c & (1u << 29);
  const bool avx = c & (1u << 28);
  if (!osxsave || !avx) return f;
  const unsigned long long xcr0 = xgetbv0();
  const bool ymmState = (xcr0 & 0x6) == 0x6;      // SSE and AVX state saved by the OS
  const bool zmmState = (xcr0 & 0xe6) == 0xe6;    // plus opmask and both halves of the zmm registers
  if (__get_cpuid_max(0, nullptr) < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  const bool avx2 = b & (1u << 5);
  const bool avx512f = b & (1u << 16);
  const bool avx512dq = b & (1u << 17);
  const bool avx512bw = b & (1u << 30);
  const bool avx512vl = b & (1u << 31);
  const bool avx512vnni = c & (1u << 11);
  f.avx2 = ymmState && avx2 && fma && f16c;
  f.avx512 = f.avx2 && zmmState && avx512f && avx512dq && avx512bw && avx512vl && avx512vnni;
#endif
  return f;
}

const Features& features() {
  static const Features f = detect();
  return f;
}

}  // namespace

bool isaSupported(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return true;
    case Isa::Avx2: return features().avx2;
    case Isa::Avx512: return features().avx512;
  }
  return false;
}

Isa bestIsa() {
  if (isaSupported(Isa::Avx512)) return Isa::Avx512;
  if (isaSupported(Isa::Avx2)) return Isa::Avx2;
  return Isa::Scalar;
}

const char* isaName(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
  }
  return "?";
}

bool parseIsa(const char* s, Isa* out) {
  for (Isa i : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
    if (std::strcmp(s, isaName(i)) == 0) {
      *out = i;
      return true;
    }
  }
  return false;
}

}  // namespace host
