// HostWeight: a weight matrix the kernels read in place, either a byte range of a file mapped with
// mmap (a GGUF or Q4NX tensor: nothing is copied, and pages load on first touch) or the bytes of a
// Uint8Array held by reference. new HostWeight({ type, k, n, path, offset, length }) or
// new HostWeight({ type, k, n, bytes }); close() unmaps before the garbage collector would.
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>

#include "wtypes.h"

namespace host {

class HostWeight : public Napi::ObjectWrap<HostWeight> {
 public:
  static Napi::Function define(Napi::Env env);
  explicit HostWeight(const Napi::CallbackInfo& info);
  ~HostWeight() override;

  // The bytes as the kernels read them; throws Failure (at /weights/<index>) when closed or when a
  // Uint8Array's buffer was detached or shrunk since.
  WeightView view(size_t index);

 private:
  Napi::Value close(const Napi::CallbackInfo& info);
  Napi::Value describe(const Napi::CallbackInfo& info);
  void mapFile(Napi::Env env, const std::string& path, int64_t offset, int64_t length);
  void unmap();

  int type_ = W_F32;
  int64_t k_ = 0, n_ = 0;
  uint64_t need_ = 0;
  std::string source_;
  void* map_ = nullptr;
  size_t mapLen_ = 0;
  const uint8_t* data_ = nullptr;
  Napi::ObjectReference bytes_;
  bool closed_ = false;
};

}  // namespace host
