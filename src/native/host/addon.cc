// The host_kernels addon: the CPU kernels of the `host` target behind N-API (node-addon-api with C++
// exceptions), so one build loads in Node and in Electron. Loaded by src/devices/host/native.ts,
// which hands over the engine's error classes before anything else is called.
//
//   setErrorClasses(classes)        the JS classes native failures are thrown as
//   info()                          { isa, available, threads, calls, kernels }
//   setIsa(name) / setThreads(n)    force a SIMD path ("scalar", "avx2", "avx512"); resize the team
//   HostWeight                      a weight read in place (weight.h)
//   runList(arena, list, weights)   one step: every kernel of the list, in one call (list.h)
//   streamRead(bytes, passes)       seconds to read `bytes` `passes` times on the team (the bench's
//                                   bandwidth figure)
//   abi()                           { kernels: [{ name, fields }], unary, binary, dtypes, weights }: the
//                                   numbering this build reads records in, each list in id order
#include <napi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <cstdlib>

#include "list.h"
#include "listRec.h"
#include "matmul.h"
#include "ops.h"
#include "state.h"
#include "weight.h"

namespace host {
namespace {

// glibc serves a block of 128 KiB or more by mmap and returns it at free, but raises that threshold to
// the size of each such block freed (up to 32 MiB), after which a decode step's 1.2 MB logits and other
// garbage blocks come from the heap, which does not shrink while the collector lets them sit (V8 frees
// external memory after about 64 MB of it): Q8_0 Qwen3-0.6B's peak RSS was ~90 MB higher for it. The
// threshold is fixed at 1 MiB once the addon loads (process-wide), unless MALLOC_MMAP_THRESHOLD_ is set
// or NPU_OFFLOAD_MALLOC=default asks to leave malloc as it is. 0 where not applied (docs/HOST.md).
int fixMmapThreshold() {
#ifdef __GLIBC__
  static const int applied = [] {
    const char* own = std::getenv("NPU_OFFLOAD_MALLOC");
    if (std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr || (own != nullptr && std::strcmp(own, "default") == 0)) return 0;
    constexpr int kThreshold = 1 << 20;
    return mallopt(M_MMAP_THRESHOLD, kThreshold) == 1 ? kThreshold : 0;
  }();
  return applied;
#else
  return 0;
#endif
}

Napi::Value info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  HostState& s = state(env);
  Napi::Object o = Napi::Object::New(env);
  o.Set("isa", isaName(s.isa));
  Napi::Array avail = Napi::Array::New(env);
  uint32_t i = 0;
  for (Isa a : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
    if (kernelsFor(a) != nullptr) avail.Set(i++, isaName(a));
  }
  o.Set("available", avail);
  o.Set("threads", s.team->size());
  o.Set("calls", double(s.calls));
  o.Set("kernels", double(s.kernelsRun));
  o.Set("mmapThreshold", fixMmapThreshold());
  return o;
}

Napi::Value setIsa(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  HostState& s = state(env);
  Isa isa;
  if (info.Length() < 1 || !info[0].IsString() || !parseIsa(info[0].As<Napi::String>().Utf8Value().c_str(), &isa)) {
    throw invalidOptions(env, "isa", "one of scalar, avx2, avx512");
  }
  const IsaKernels* k = kernelsFor(isa);
  if (k == nullptr) throw invalidOptions(env, "isa", std::string(isaName(isa)) + " is not supported by this CPU (or this build)");
  s.isa = isa;
  s.kernels = k;
  return Napi::String::New(env, isaName(isa));
}

Napi::Value setThreads(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const double n = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : NAN;
  if (!(n == std::floor(n)) || n < 1 || n > 1024) throw invalidOptions(env, "threads", "an integer from 1 to 1024");
  HostState& s = state(env);
  if (s.team->size() != int(n)) s.team = std::make_unique<Team>(int(n));
  return Napi::Number::New(env, n);
}

// Test only: setUnaryFault(op, ulps) (ops.h); op -1 clears it.
Napi::Value setUnaryFaultJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) throw Napi::TypeError::New(env, "setUnaryFault(op, ulps) takes two numbers");
  const int op = info[0].As<Napi::Number>().Int32Value();
  const int ulps = info[1].As<Napi::Number>().Int32Value();
  if (op < -1 || op >= U_COUNT || ulps < 0 || ulps > 1000) throw Napi::RangeError::New(env, "setUnaryFault: op is -1 or a unary op code, ulps 0 to 1000");
  setUnaryFault(op, ulps);
  return env.Undefined();
}

// Test only: setAttentionFault(mode) (ops.h): 0 none, 1 drop the last visible position, 2 a wrong scale,
// 3 read an f16 cache as bf16.
Napi::Value setAttentionFaultJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "setAttentionFault(mode) takes a number");
  const int mode = info[0].As<Napi::Number>().Int32Value();
  if (mode < 0 || mode > 3) throw Napi::RangeError::New(env, "setAttentionFault: mode is 0, 1, 2 or 3");
  setAttentionFault(mode);
  return env.Undefined();
}

// Test only: setDropBlockFault(on) (matmul.h).
Napi::Value setDropBlockFaultJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsBoolean()) throw Napi::TypeError::New(env, "setDropBlockFault(on) takes a boolean");
  setDropBlockFault(info[0].As<Napi::Boolean>().Value());
  return env.Undefined();
}

// Test only: setQ8RoundFault(on) (matmul.h): matmul_wq rounds every activation code one step up.
Napi::Value setQ8RoundFaultJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsBoolean()) throw Napi::TypeError::New(env, "setQ8RoundFault(on) takes a boolean");
  setQ8RoundFault(info[0].As<Napi::Boolean>().Value());
  return env.Undefined();
}

// The bytes of a Uint8Array argument (over an ArrayBuffer or a SharedArrayBuffer).
Napi::Uint8Array bytesArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (info.Length() <= i || !info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    throw Napi::TypeError::New(info.Env(), std::string(what) + " is a Uint8Array");
  }
  return info[i].As<Napi::Uint8Array>();
}

Napi::Value runListJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  HostState& s = state(env);
  s.calls++;
  // The arena: a Uint8Array, or a whole ArrayBuffer (one past 4 GiB, which no Uint8Array spans in Node 20).
  uint8_t* arenaData = nullptr;
  size_t arenaBytes = 0;
  if (info.Length() > 0 && info[0].IsArrayBuffer()) {
    Napi::ArrayBuffer ab = info[0].As<Napi::ArrayBuffer>();
    arenaData = static_cast<uint8_t*>(ab.Data());
    arenaBytes = ab.ByteLength();
  } else {
    Napi::Uint8Array arena = bytesArg(info, 0, "runList: the arena");
    arenaData = arena.Data();
    arenaBytes = arena.ByteLength();
  }
  if (info.Length() < 2 || !info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
    throw Napi::TypeError::New(env, "runList: the kernel list is a Float64Array");
  }
  Napi::Float64Array list = info[1].As<Napi::Float64Array>();
  std::vector<WeightView> views;
  if (info.Length() > 2 && !info[2].IsUndefined()) {
    if (!info[2].IsArray()) throw Napi::TypeError::New(env, "runList: weights is an array of HostWeight");
    Napi::Array ws = info[2].As<Napi::Array>();
    Napi::Function cls = s.weightClass.Value();
    try {
      for (uint32_t i = 0; i < ws.Length(); i++) {
        Napi::Value w = ws.Get(i);
        if (!w.IsObject() || !w.As<Napi::Object>().InstanceOf(cls)) {
          throw Failure::invalid("/weights/" + std::to_string(i), "not a HostWeight");
        }
        views.push_back(HostWeight::Unwrap(w.As<Napi::Object>())->view(i));
      }
    } catch (const Failure& f) {
      throw fromFailure(env, f);
    }
  }
  const Ctx c{s.kernels, s.team.get(), -1};
  try {
    s.kernelsRun += runList(c, Arena{arenaData, arenaBytes}, list.Data(), list.ElementLength(), views);
  } catch (const Failure& f) {
    throw fromFailure(env, f);
  }
  return env.Undefined();
}

// [p, p + n) set to zeros, whole pages inside it given back on Linux when the run is long enough.
void zeroRun(uint8_t* p, size_t n) {
#ifdef __linux__
  const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
  const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t e = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  if (e > b && e - b >= 16 * page && ::madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED) == 0) {
    std::memset(p, 0, b - reinterpret_cast<uintptr_t>(p));
    std::memset(reinterpret_cast<void*>(e), 0, reinterpret_cast<uintptr_t>(p) + n - e);
    return;
  }
#endif
  std::memset(p, 0, n);
}

// zeroBytes(arena: ArrayBuffer, offset, length): the bytes [offset, offset + length) of an arena set to
// zero. On Linux the whole pages inside the range are given back to the kernel (MADV_DONTNEED: the
// arena is private anonymous memory, whose pages so given back read as zeros and take no memory until
// written again), the partial pages at its ends written; elsewhere every byte is written. A KV cache
// zeroed for a new generation so holds memory only for the positions its steps write.
Napi::Value zeroBytes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsArrayBuffer() || !info[1].IsNumber() || !info[2].IsNumber()) {
    throw Napi::TypeError::New(env, "zeroBytes: (arena: ArrayBuffer, offset: number, length: number)");
  }
  Napi::ArrayBuffer ab = info[0].As<Napi::ArrayBuffer>();
  const double off = info[1].As<Napi::Number>().DoubleValue();
  const double len = info[2].As<Napi::Number>().DoubleValue();
  const double size = double(ab.ByteLength());
  if (!(off >= 0 && len >= 0 && off == std::floor(off) && len == std::floor(len) && off + len <= size)) {
    throw Napi::RangeError::New(env, "zeroBytes: the range [" + std::to_string(off) + ", +" + std::to_string(len) + ") is not inside the arena's " +
                                         std::to_string(ab.ByteLength()) + " bytes");
  }
  zeroRun(static_cast<uint8_t*>(ab.Data()) + size_t(off), size_t(len));
  return env.Undefined();
}

// copyBytes(to: ArrayBuffer, at, from: ArrayBuffer, offset, length): the bytes [offset, offset + length)
// of `from` copied to [at, at + length) of `to` (two private ArrayBuffers, the ranges not overlapping
// unless equal), the same bytes as a plain copy. Blocks of `from` that are all zeros are not copied but
// zeroed in `to` as zeroBytes does (on Linux the whole pages given back): a KV cache moved with only its
// first positions written reads the rest (zero pages that take no memory) and writes none of it.
namespace {
constexpr size_t kCopyBlock = size_t(64) << 10;

bool allZero(const uint8_t* p, size_t n) {
  size_t i = 0;
  // 256 bytes at a time, or-ed together (a loop the compiler vectorizes), then the tail.
  for (; i + 256 <= n; i += 256) {
    uint64_t acc = 0;
    for (int j = 0; j < 32; j++) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * j, 8);
      acc |= w;
    }
    if (acc != 0) return false;
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w != 0) return false;
  }
  for (; i < n; i++)
    if (p[i] != 0) return false;
  return true;
}

}  // namespace

Napi::Value copyBytes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 5 || !info[0].IsArrayBuffer() || !info[1].IsNumber() || !info[2].IsArrayBuffer() || !info[3].IsNumber() || !info[4].IsNumber()) {
    throw Napi::TypeError::New(env, "copyBytes: (to: ArrayBuffer, at: number, from: ArrayBuffer, offset: number, length: number)");
  }
  Napi::ArrayBuffer to = info[0].As<Napi::ArrayBuffer>();
  Napi::ArrayBuffer from = info[2].As<Napi::ArrayBuffer>();
  const double at = info[1].As<Napi::Number>().DoubleValue();
  const double off = info[3].As<Napi::Number>().DoubleValue();
  const double len = info[4].As<Napi::Number>().DoubleValue();
  const auto inside = [](double o, double n, double size) { return o >= 0 && n >= 0 && o == std::floor(o) && n == std::floor(n) && o + n <= size; };
  if (!inside(at, len, double(to.ByteLength())) || !inside(off, len, double(from.ByteLength()))) {
    throw Napi::RangeError::New(env, "copyBytes: a range of " + std::to_string(len) + " bytes is not inside its ArrayBuffer");
  }
  uint8_t* d = static_cast<uint8_t*>(to.Data()) + size_t(at);
  const uint8_t* s = static_cast<const uint8_t*>(from.Data()) + size_t(off);
  const size_t n = size_t(len);
  if (d == s) return env.Undefined();
  if ((d < s + n) && (s < d + n)) throw Napi::RangeError::New(env, "copyBytes: the two ranges overlap");
  // Runs of zero blocks zeroed together (a page given back needs whole pages), other blocks copied.
  size_t zeroFrom = 0, zeroLen = 0;
  for (size_t i = 0; i < n; i += kCopyBlock) {
    const size_t m = std::min(kCopyBlock, n - i);
    if (allZero(s + i, m)) {
      if (zeroLen == 0) zeroFrom = i;
      zeroLen += m;
      continue;
    }
    if (zeroLen > 0) {
      zeroRun(d + zeroFrom, zeroLen);
      zeroLen = 0;
    }
    std::memcpy(d + i, s + i, m);
  }
  if (zeroLen > 0) zeroRun(d + zeroFrom, zeroLen);
  return env.Undefined();
}

Napi::Value streamRead(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  HostState& s = state(env);
  Napi::Uint8Array buf = bytesArg(info, 0, "streamRead: the buffer");
  const double passes = info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().DoubleValue() : 1;
  const uint64_t* words = reinterpret_cast<const uint64_t*>(buf.Data());
  const int64_t n = int64_t(buf.ByteLength() / 64 * 8);  // whole cache lines
  std::vector<uint64_t> sink(size_t(s.team->size()) * 8, 0);
  const auto t0 = std::chrono::steady_clock::now();
  for (int p = 0; p < int(passes); p++) {
    // Pieces of 1 MiB: each lane streams long runs, as the hardware prefetchers like.
    s.team->run(n, 1 << 17, [&](int lane, int64_t b, int64_t e) {
      // Eight independent sums of 64-bit words: the loads, not the adds, set the pace.
      uint64_t a[8] = {};
      for (int64_t i = b; i < e; i += 8) {
        for (int j = 0; j < 8; j++) a[j] += words[i + j];
      }
      for (int j = 0; j < 8; j++) sink[size_t(lane) * 8 + j] += a[j];
    });
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t check = 0;
  for (uint64_t v : sink) check += v;
  Napi::Object o = Napi::Object::New(env);
  o.Set("seconds", secs);
  o.Set("checksum", double(check & 0xffffffffu));
  return o;
}

template <size_t N>
Napi::Array names(Napi::Env env, const char* const (&list)[N]) {
  Napi::Array a = Napi::Array::New(env, N);
  for (size_t i = 0; i < N; i++) a.Set(uint32_t(i), list[i]);
  return a;
}

#define HOST_ENUM_NAME(id, name) name,
const char* const UNARY_NAMES[] = {HOST_UNARY_OPS(HOST_ENUM_NAME)};
const char* const BINARY_NAMES[] = {HOST_BINARY_OPS(HOST_ENUM_NAME)};
const char* const DTYPE_NAMES[] = {HOST_DTYPES(HOST_ENUM_NAME)};
#undef HOST_ENUM_NAME
static_assert(sizeof UNARY_NAMES / sizeof *UNARY_NAMES == U_COUNT && sizeof BINARY_NAMES / sizeof *BINARY_NAMES == OP_COUNT &&
                  sizeof DTYPE_NAMES / sizeof *DTYPE_NAMES == D_COUNT,
              "one name per id");

Napi::Value abi(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array kernels = Napi::Array::New(env, K_OP_COUNT);
  for (int op = 0; op < K_OP_COUNT; op++) {
    Napi::Object k = Napi::Object::New(env);
    k.Set("name", kernelName(op));
    Napi::Array fields = Napi::Array::New(env, size_t(kernelFields(op)));
    for (int i = 0; i < kernelFields(op); i++) fields.Set(uint32_t(i), kernelFieldName(op, i));
    k.Set("fields", fields);
    kernels.Set(uint32_t(op), k);
  }
  Napi::Array weights = Napi::Array::New(env, W_COUNT);
  for (int t = 0; t < W_COUNT; t++) weights.Set(uint32_t(t), wtypeInfo(t).name);
  Napi::Object o = Napi::Object::New(env);
  o.Set("kernels", kernels);
  o.Set("unary", names(env, UNARY_NAMES));
  o.Set("binary", names(env, BINARY_NAMES));
  o.Set("dtypes", names(env, DTYPE_NAMES));
  o.Set("weights", weights);
  return o;
}

Napi::Object init(Napi::Env env, Napi::Object exports) {
  fixMmapThreshold();
  HostState& s = state(env);
  Napi::Function weight = HostWeight::define(env);
  s.weightClass = Napi::Persistent(weight);
  exports.Set("setErrorClasses", Napi::Function::New<setErrorClasses>(env, "setErrorClasses"));
  exports.Set("info", Napi::Function::New<info>(env, "info"));
  exports.Set("setIsa", Napi::Function::New<setIsa>(env, "setIsa"));
  exports.Set("setThreads", Napi::Function::New<setThreads>(env, "setThreads"));
  exports.Set("runList", Napi::Function::New<runListJs>(env, "runList"));
  exports.Set("setUnaryFault", Napi::Function::New<setUnaryFaultJs>(env, "setUnaryFault"));
  exports.Set("setAttentionFault", Napi::Function::New<setAttentionFaultJs>(env, "setAttentionFault"));
  exports.Set("setDropBlockFault", Napi::Function::New<setDropBlockFaultJs>(env, "setDropBlockFault"));
  exports.Set("setQ8RoundFault", Napi::Function::New<setQ8RoundFaultJs>(env, "setQ8RoundFault"));
  exports.Set("streamRead", Napi::Function::New<streamRead>(env, "streamRead"));
  exports.Set("zeroBytes", Napi::Function::New<zeroBytes>(env, "zeroBytes"));
  exports.Set("copyBytes", Napi::Function::New<copyBytes>(env, "copyBytes"));
  exports.Set("abi", Napi::Function::New<abi>(env, "abi"));
  exports.Set("HostWeight", weight);
  return exports;
}

}  // namespace
}  // namespace host

namespace {
Napi::Object Init(Napi::Env env, Napi::Object exports) { return host::init(env, exports); }
}  // namespace

NODE_API_MODULE(host_kernels, Init)
