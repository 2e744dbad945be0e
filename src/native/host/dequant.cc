#include "dequant.h"

#include <cstring>

namespace host {
namespace {

void rowQ4_0(const uint8_t* r, int64_t K, float* y) {
  for (int64_t b = 0; b < K / 32; b++, r += 18, y += 32) {
    const float d = halfToFloat(loadU16(r));
    for (int j = 0; j < 16; j++) {
      y[j] = float((r[2 + j] & 15) - 8) * d;
      y[j + 16] = float((r[2 + j] >> 4) - 8) * d;
    }
  }
}

void rowQ4_1(const uint8_t* r, int64_t K, float* y) {
  for (int64_t b = 0; b < K / 32; b++, r += 20, y += 32) {
    const float d = halfToFloat(loadU16(r));
    const float m = halfToFloat(loadU16(r + 2));
    for (int j = 0; j < 16; j++) {
      y[j] = float(r[4 + j] & 15) * d + m;
      y[j + 16] = float(r[4 + j] >> 4) * d + m;
    }
  }
}

void rowQ8_0(const uint8_t* r, int64_t K, float* y) {
  for (int64_t b = 0; b < K / 32; b++, r += 34, y += 32) {
    const float d = halfToFloat(loadU16(r));
    for (int j = 0; j < 32; j++) y[j] = float(int8_t(r[2 + j])) * d;
  }
}

void scaleMin(const uint8_t* s, int j, int* sc, int* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
    *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

void rowQ4_K(const uint8_t* r, int64_t K, float* y) {
  for (int64_t b = 0; b < K / 256; b++, r += 144, y += 256) {
    const float d = halfToFloat(loadU16(r));
    const float dmin = halfToFloat(loadU16(r + 2));
    for (int s = 0; s < 8; s++) {
      int sc, m;
      scaleMin(r + 4, s, &sc, &m);
      const float d1 = d * float(sc);
      const float m1 = dmin * float(m);
      const uint8_t* qs = r + 16 + (s >> 1) * 32;
      for (int l = 0; l < 32; l++) y[s * 32 + l] = float(s & 1 ? qs[l] >> 4 : qs[l] & 15) * d1 - m1;
    }
  }
}

void rowQ6_K(const uint8_t* r, int64_t K, float* y) {
  for (int64_t b = 0; b < K / 256; b++, r += 210, y += 256) {
    const float d = halfToFloat(loadU16(r + 208));
    for (int half = 0; half < 2; half++) {
      const uint8_t* ql = r + half * 64;
      const uint8_t* qh = r + 128 + half * 32;
      const uint8_t* sc = r + 192 + half * 8;
      float* out = y + half * 128;
      for (int l = 0; l < 32; l++) {
        const int is = l >> 4;
        const int h = qh[l];
        out[l] = float(((ql[l] & 15) | ((h & 3) << 4)) - 32) * (d * float(int8_t(sc[is])));
        out[l + 32] = float(((ql[l + 32] & 15) | (((h >> 2) & 3) << 4)) - 32) * (d * float(int8_t(sc[is + 2])));
        out[l + 64] = float(((ql[l] >> 4) | (((h >> 4) & 3) << 4)) - 32) * (d * float(int8_t(sc[is + 4])));
        out[l + 96] = float(((ql[l + 32] >> 4) | (((h >> 6) & 3) << 4)) - 32) * (d * float(int8_t(sc[is + 6])));
      }
    }
  }
}

// Row n of a q4nx weight: tile (n/32, k/256); code byte 1024 + (r/16)*2048 + c*8 + (r%16)/2, low
// nibble for even r; scale and zero bf16 at plane index (c/32)*32 + r.
void rowQ4nx(const WeightView& w, int64_t n, float* y) {
  const int64_t i = n / Q4NX_TILE_ROWS;
  const int r = int(n % Q4NX_TILE_ROWS);
  const int shift = (r & 1) * 4;
  for (int64_t j = 0; j < w.kTiles; j++) {
    const uint8_t* chunk = w.data + size_t(i * w.kTiles + j) * Q4NX_TILE_BYTES;
    const int64_t left = w.k - j * Q4NX_TILE_COLS;
    const int cols = left < Q4NX_TILE_COLS ? int(left) : Q4NX_TILE_COLS;
    const uint8_t* codes = chunk + 1024 + (r >> 4) * 2048 + ((r & 15) >> 1);
    for (int g = 0; g * 32 < cols; g++) {
      const float scale = bf16ToFloat(loadU16(chunk + 2 * (g * 32 + r)));
      const float zero = bf16ToFloat(loadU16(chunk + 512 + 2 * (g * 32 + r)));
      const int end = cols < g * 32 + 32 ? cols : g * 32 + 32;
      for (int c = g * 32; c < end; c++) y[j * Q4NX_TILE_COLS + c] = float((codes[c * 8] >> shift) & 15) * scale + zero;
    }
  }
}

}  // namespace

void dequantRow(const WeightView& w, int64_t n, float* out) {
  const uint8_t* r = w.data + size_t(n) * w.rowBytes;
  switch (w.type) {
    case W_F32: std::memcpy(out, r, size_t(w.k) * 4); return;
    case W_F16:
      for (int64_t j = 0; j < w.k; j++) out[j] = halfToFloat(loadU16(r + 2 * j));
      return;
    case W_BF16:
      for (int64_t j = 0; j < w.k; j++) out[j] = bf16ToFloat(loadU16(r + 2 * j));
      return;
    case W_Q4_0: rowQ4_0(r, w.k, out); return;
    case W_Q4_1: rowQ4_1(r, w.k, out); return;
    case W_Q8_0: rowQ8_0(r, w.k, out); return;
    case W_Q4_K: rowQ4_K(r, w.k, out); return;
    case W_Q6_K: rowQ6_K(r, w.k, out); return;
    case W_Q4NX_Q41: rowQ4nx(w, n, out); return;
  }
}

void dequantPanel(const WeightView& w, int64_t n0, int64_t cols, int64_t ld, float* wp, float* rows) {
  const int64_t K = w.k;
  for (int64_t c = 0; c < ld; c++) {
    if (c < cols) dequantRow(w, n0 + c, rows + c * K);
    else std::memset(rows + c * K, 0, size_t(K) * 4);
  }
  // Transposed 16 columns of K at a time, so the lines written stay in L1 while all ld rows fill them.
  for (int64_t kb = 0; kb < K; kb += 16) {
    const int64_t kn = K - kb < 16 ? K - kb : 16;
    for (int64_t c = 0; c < ld; c++) {
      const float* src = rows + c * K + kb;
      for (int64_t i = 0; i < kn; i++) wp[(kb + i) * ld + c] = src[i];
    }
  }
}

}  // namespace host
