// Weight storage types: ggml's block layouts byte for byte (ggml-common.h) and Q4NX's 5120-byte q4_1
// tile (docs/Q4NX.md). A weight is a matrix of N output rows of K elements; a ggml type stores each
// row as K/blockSize blocks (a GGUF tensor of ne0 = K, ne1 = N), a Q4NX tensor stores 32 x 256 tiles
// row-major over the tile grid, K padded to 256 and N to 32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace host {

// The numbering is the addon's ABI: src/devices/host/native.ts names the same ids.
enum WType : int {
  W_F32 = 0,
  W_F16 = 1,
  W_BF16 = 2,
  W_Q4_0 = 3,
  W_Q4_1 = 4,
  W_Q8_0 = 5,
  W_Q4_K = 6,
  W_Q6_K = 7,
  W_Q4NX_Q41 = 8,
  W_COUNT = 9,
};

struct WTypeInfo {
  const char* name;
  int blockElems;  // elements of one block along K (1 for the float types)
  int blockBytes;  // bytes of one block
};

// The table entry of a type id; `t` must be < W_COUNT.
const WTypeInfo& wtypeInfo(int t);

constexpr int Q4NX_TILE_ROWS = 32;
constexpr int Q4NX_TILE_COLS = 256;
constexpr int Q4NX_TILE_BYTES = 5120;

// A weight's bytes as the kernels read them. Built only by `describeWeight`, which checks the size.
struct WeightView {
  const uint8_t* data = nullptr;
  int type = W_F32;
  int64_t k = 0;
  int64_t n = 0;
  size_t rowBytes = 0;  // ggml types: bytes of one row of K elements
  int64_t kTiles = 0;   // q4nx: tiles along K (ceil(K/256))
};

// The bytes a weight of `type` and [K, N] occupies; false with `why` for a shape the type cannot hold
// (K not a whole number of blocks, an empty or oversized matrix).
bool weightBytes(int type, int64_t k, int64_t n, uint64_t* bytes, std::string* why);

// f16 bits to f32, exactly (subnormals, infinities and NaN kept).
inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t e = (h >> 10) & 31;
  uint32_t m = h & 1023;
  uint32_t bits;
  if (e == 0) {
    if (m == 0) {
      bits = sign;
    } else {
      // A subnormal half is m * 2^-24: normalize it into an f32.
      int shift = 0;
      while ((m & 1024) == 0) {
        m <<= 1;
        shift++;
      }
      bits = sign | (uint32_t(127 - 15 - shift + 1) << 23) | ((m & 1023) << 13);
    }
  } else if (e == 31) {
    bits = sign | 0x7f800000u | (m << 13);
  } else {
    bits = sign | ((e + 127 - 15) << 23) | (m << 13);
  }
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return f;
}

inline float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t loadU16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }

}  // namespace host
