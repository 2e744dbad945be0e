#include "weight.h"

#include <cerrno>
#include <cmath>
#include <cstring>

#include "failure.h"
#include "state.h"

#ifndef _WIN32
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace host {
namespace {

int64_t intField(Napi::Env env, Napi::Object o, const char* name, const std::string& where) {
  Napi::Value v = o.Get(name);
  const double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : NAN;
  if (!(d == std::floor(d)) || d < 0 || d > 281474976710656.0) {
    throw invalidInput(env, where, std::string(name) + " is not a non-negative integer");
  }
  return int64_t(d);
}

// f32 and 16-bit weights are read as arrays of their element: their address must be aligned to it.
int alignOf(int type) { return type == W_F32 ? 4 : (type == W_F16 || type == W_BF16) ? 2
                                                                                     : 1; }

}  // namespace

Napi::Function HostWeight::define(Napi::Env env) {
  return DefineClass(env, "HostWeight", {
                                            InstanceMethod<&HostWeight::close>("close"),
                                            InstanceMethod<&HostWeight::describe>("describe"),
                                        });
}

HostWeight::HostWeight(const Napi::CallbackInfo& info) : Napi::ObjectWrap<HostWeight>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) throw invalidInput(env, "weight", "new HostWeight expects a spec object");
  Napi::Object spec = info[0].As<Napi::Object>();
  const bool file = spec.Get("path").IsString();
  source_ = file ? spec.Get("path").As<Napi::String>().Utf8Value() : std::string("bytes");
  type_ = int(intField(env, spec, "type", source_));
  k_ = intField(env, spec, "k", source_);
  n_ = intField(env, spec, "n", source_);
  std::string why;
  if (!weightBytes(type_, k_, n_, &need_, &why)) throw invalidInput(env, source_, why);
  const std::string name = wtypeInfo(type_).name;
  uint64_t have;
  if (file) {
    const int64_t offset = intField(env, spec, "offset", source_);
    const int64_t length = intField(env, spec, "length", source_);
    have = uint64_t(length);
    if (have < need_) {
      throw invalidInput(env, source_, "a " + name + " weight [K=" + std::to_string(k_) + ", N=" + std::to_string(n_) + "] needs " + std::to_string(need_) + " bytes; the range holds " + std::to_string(have));
    }
    mapFile(env, source_, offset, int64_t(need_));
  } else {
    Napi::Value b = spec.Get("bytes");
    if (!b.IsTypedArray() || b.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
      throw invalidInput(env, "weight", "a spec without a path needs bytes: a Uint8Array");
    }
    Napi::Uint8Array u8 = b.As<Napi::Uint8Array>();
    have = u8.ByteLength();
    if (have < need_) {
      throw invalidInput(env, source_, "a " + name + " weight [K=" + std::to_string(k_) + ", N=" + std::to_string(n_) + "] needs " + std::to_string(need_) + " bytes; got " + std::to_string(have));
    }
    bytes_ = Napi::Persistent(b.As<Napi::Object>());
    data_ = u8.Data();
  }
  // Beyond the matrix, only whole q4nx tile rows may follow (a file padding its rows further).
  const uint64_t tileRow = uint64_t((k_ + Q4NX_TILE_COLS - 1) / Q4NX_TILE_COLS) * Q4NX_TILE_BYTES;
  if (have != need_ && !(type_ == W_Q4NX_Q41 && (have - need_) % tileRow == 0)) {
    unmap();
    throw invalidInput(env, source_, "a " + name + " weight [K=" + std::to_string(k_) + ", N=" + std::to_string(n_) + "] is " + std::to_string(need_) + " bytes, not " + std::to_string(have));
  }
  if (reinterpret_cast<uintptr_t>(data_) % alignOf(type_) != 0) {
    unmap();
    throw invalidInput(env, source_, "the " + name + " data starts at an address not aligned to " + std::to_string(alignOf(type_)) + " bytes");
  }
}

void HostWeight::mapFile(Napi::Env env, const std::string& path, int64_t offset, int64_t length) {
#ifdef _WIN32
  (void)offset;
  (void)length;
  throw invalidInput(env, path, "mapping a weight from a file is not written for Windows yet");
#else
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw invalidInput(env, path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int e = errno;
    ::close(fd);
    throw invalidInput(env, path, e ? std::string("cannot stat: ") + std::strerror(e) : "not a regular file");
  }
  if (uint64_t(offset) + uint64_t(length) > uint64_t(st.st_size)) {
    ::close(fd);
    throw invalidInput(env, path, "bytes [" + std::to_string(offset) + ", +" + std::to_string(length) + ") run past the file's " + std::to_string(int64_t(st.st_size)));
  }
  const int64_t page = ::sysconf(_SC_PAGESIZE);
  const int64_t start = offset / page * page;
  mapLen_ = size_t(offset - start + length);
  // Populated now (read in and entered in the page table, as llama.cpp maps its files): the first step
  // that reads the weight would otherwise take every page's fault, in the middle of a prompt.
#ifdef MAP_POPULATE
  const int flags = MAP_PRIVATE | MAP_POPULATE;
#else
  const int flags = MAP_PRIVATE;
#endif
  void* m = ::mmap(nullptr, mapLen_, PROT_READ, flags, fd, off_t(start));
  const int e = errno;
  ::close(fd);  // the mapping keeps the file open
  if (m == MAP_FAILED) {
    mapLen_ = 0;
    throw invalidInput(env, path, std::string("mmap failed: ") + std::strerror(e));
  }
  map_ = m;
  data_ = static_cast<const uint8_t*>(m) + (offset - start);
#endif
}

void HostWeight::unmap() {
#ifndef _WIN32
  if (map_ != nullptr) ::munmap(map_, mapLen_);
#endif
  map_ = nullptr;
  mapLen_ = 0;
  data_ = nullptr;
  if (!bytes_.IsEmpty()) bytes_.Reset();
}

HostWeight::~HostWeight() { unmap(); }

Napi::Value HostWeight::close(const Napi::CallbackInfo& info) {
  unmap();
  closed_ = true;
  return info.Env().Undefined();
}

Napi::Value HostWeight::describe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("type", wtypeInfo(type_).name);
  o.Set("k", double(k_));
  o.Set("n", double(n_));
  o.Set("bytes", double(need_));
  o.Set("mapped", map_ != nullptr);
  o.Set("closed", closed_);
  return o;
}

WeightView HostWeight::view(size_t index) {
  const std::string at = "/weights/" + std::to_string(index);
  if (closed_) throw Failure::invalid(at, "weight " + source_ + " was closed");
  WeightView w;
  if (map_ != nullptr) {
    w.data = data_;
  } else {
    // Re-read each time: the buffer may have been transferred (detached) since.
    Napi::Uint8Array u8 = bytes_.Value().As<Napi::Uint8Array>();
    if (u8.ByteLength() < need_) throw Failure::invalid(at, "the bytes behind the weight are gone (the buffer was detached or shrunk)");
    w.data = u8.Data();
  }
  w.type = type_;
  w.k = k_;
  w.n = n_;
  const WTypeInfo& t = wtypeInfo(type_);
  w.rowBytes = size_t(k_ / t.blockElems) * size_t(t.blockBytes);
  w.kTiles = (k_ + Q4NX_TILE_COLS - 1) / Q4NX_TILE_COLS;
  return w;
}

}  // namespace host
