#include "wtypes.h"

namespace host {
namespace {

const WTypeInfo TABLE[W_COUNT] = {
    {"f32", 1, 4},
    {"f16", 1, 2},
    {"bf16", 1, 2},
    {"q4_0", 32, 18},
    {"q4_1", 32, 20},
    {"q8_0", 32, 34},
    {"q4_k", 256, 144},
    {"q6_k", 256, 210},
    // A q4nx tile is 32 rows by 256 columns; along one row it acts as a block of 256.
    {"q4nx_q41", 256, Q4NX_TILE_BYTES},
};

// Weights past 2^48 bytes or 2^40 elements along one side are refused before any product can wrap.
constexpr int64_t MAX_SIDE = int64_t(1) << 40;
constexpr uint64_t MAX_BYTES = uint64_t(1) << 48;

}  // namespace

const WTypeInfo& wtypeInfo(int t) { return TABLE[t]; }

bool weightBytes(int type, int64_t k, int64_t n, uint64_t* bytes, std::string* why) {
  if (type < 0 || type >= W_COUNT) {
    *why = "unknown weight type " + std::to_string(type);
    return false;
  }
  const WTypeInfo& info = TABLE[type];
  if (k <= 0 || n <= 0 || k > MAX_SIDE || n > MAX_SIDE) {
    *why = "shape [K=" + std::to_string(k) + ", N=" + std::to_string(n) + "] is empty or too large";
    return false;
  }
  unsigned __int128 total;
  if (type == W_Q4NX_Q41) {
    // K and N need not fill the tile grid: the file pads K to 256 and N to 32.
    uint64_t kt = uint64_t((k + Q4NX_TILE_COLS - 1) / Q4NX_TILE_COLS);
    uint64_t nt = uint64_t((n + Q4NX_TILE_ROWS - 1) / Q4NX_TILE_ROWS);
    total = (unsigned __int128)kt * nt * Q4NX_TILE_BYTES;
  } else {
    if (k % info.blockElems != 0) {
      *why = "K=" + std::to_string(k) + " is not a whole number of " + info.name + " blocks of " +
             std::to_string(info.blockElems);
      return false;
    }
    total = (unsigned __int128)(k / info.blockElems) * info.blockBytes * uint64_t(n);
  }
  if (total > MAX_BYTES) {
    *why = "a weight of " + std::to_string(uint64_t(total >> 20)) + " MiB is past the 2^48-byte limit";
    return false;
  }
  *bytes = uint64_t(total);
  return true;
}

}  // namespace host
