// Checks kernel-list records before anything runs: every field an integer in range, every region
// inside the arena and aligned, outputs disjoint from or identical to their inputs (list.h).
#include <cmath>
#include <cstring>
#include <string>

#include "failure.h"
#include "listRec.h"

namespace host {
namespace {

struct OpInfo {
  const char* name;
  std::vector<const char*> fields;
};

const OpInfo OPS[K_OP_COUNT] = {
#define HOST_KERNEL_INFO(id, name, ...) {name, {__VA_ARGS__}},
    HOST_KERNEL_OPS(HOST_KERNEL_INFO)
#undef HOST_KERNEL_INFO
};

// Every count and offset is below 2^48, so sums and products of two stay exact in 128 bits and well
// inside size_t once checked against the arena.
constexpr double MAX_INT = 281474976710656.0;

struct Range {
  size_t off, bytes;
};

class Checker {
 public:
  Checker(const Arena& a, const std::vector<WeightView>& weights, size_t index, const double* rec, int op)
      : arena_(a), weights_(weights), index_(index), rec_(rec), op_(op) {}

  [[noreturn]] void fail(const std::string& field, const std::string& reason) const {
    throw Failure::invalid("/kernels/" + std::to_string(index_) + (field.empty() ? "" : "/" + field),
                           std::string(OPS[op_].name) + ": " + reason);
  }

  int slot(const char* name) const {
    const auto& f = OPS[op_].fields;
    for (size_t i = 0; i < f.size(); i++) {
      if (std::strcmp(f[i], name) == 0) return int(i);
    }
    fail(name, "no such field (a defect of the addon)");
  }

  int64_t integer(const char* name, int64_t lo = 0, int64_t hi = int64_t(MAX_INT)) const {
    const double d = rec_[2 + slot(name)];
    if (!(d == std::floor(d)) || d < double(lo) || d > double(hi)) {
      fail(name, std::to_string(d) + " is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return int64_t(d);
  }

  double number(const char* name) const { return rec_[2 + slot(name)]; }

  // The bytes [off, off + count*elem) of the arena named by field `name`, aligned to elem.
  uint8_t* region(const char* name, unsigned __int128 count, int elem, Range* out) const {
    const int64_t off = integer(name);
    const unsigned __int128 bytes = count * unsigned(elem);
    if ((unsigned __int128)off + bytes > arena_.bytes) {
      fail(name, "bytes [" + std::to_string(off) + ", +" + std::to_string(uint64_t(bytes)) + ") run past the arena's " +
                     std::to_string(arena_.bytes));
    }
    if ((reinterpret_cast<uintptr_t>(arena_.base) + size_t(off)) % size_t(elem) != 0) {
      fail(name, "offset " + std::to_string(off) + " is not aligned to " + std::to_string(elem) + " bytes");
    }
    *out = Range{size_t(off), size_t(bytes)};
    return arena_.base + off;
  }

  const WeightView* weight(const char* name) const {
    const int64_t i = integer(name, 0, int64_t(weights_.size()) - 1);
    return &weights_[size_t(i)];
  }

  // An output that overlaps an input must be that same range (elementwise in place).
  void disjointOrSame(const char* out, const Range& y, const char* in, const Range& x, bool sameOk) const {
    const bool overlap = y.off < x.off + x.bytes && x.off < y.off + y.bytes;
    if (!overlap || y.bytes == 0 || x.bytes == 0) return;
    if (sameOk && y.off == x.off && y.bytes == x.bytes) return;
    fail(out, std::string("overlaps ") + in + (sameOk ? " without being the same range" : ""));
  }

 private:
  const Arena& arena_;
  const std::vector<WeightView>& weights_;
  size_t index_;
  const double* rec_;
  int op_;
};

constexpr int F = 4;  // bytes of an f32 or i32

// The dtype of a typed kernel: f16, bf16 or i32 (f32 has the SIMD kernels; bool is no arithmetic).
int64_t typedDtype(const Checker& ck, const char* name) {
  const int64_t d = ck.integer(name, 0, D_COUNT - 1);
  if (d != D_F16 && d != D_BF16 && d != D_I32) ck.fail(name, "a typed kernel computes in f16, bf16 or i32");
  return d;
}

}  // namespace

Rec checkRecord(const Arena& a, const std::vector<WeightView>& weights, size_t index, const double* r, int op) {
  Checker ck(a, weights, index, r, op);
  Rec rec;
  rec.op = op;
  const double e = r[1];
  if (!(e == std::floor(e)) || e < -1 || e > MAX_INT) ck.fail("eqn", "the equation number is not an integer >= -1");
  rec.eqn = int64_t(e);
  auto& v = rec.v;
  Range x, y, z;
  switch (op) {
    case K_MATMUL_W:
    case K_MATMUL_WQ: {
      rec.w = ck.weight("w");
      v[2] = ck.integer("T", 1);
      rec.p[0] = ck.region("x", (unsigned __int128)v[2] * rec.w->k, F, &x);
      rec.p[1] = ck.region("y", (unsigned __int128)v[2] * rec.w->n, F, &y);
      ck.disjointOrSame("y", y, "x", x, false);
      break;
    }
    case K_MATMUL_ID:
    case K_MATMUL_IDQ: {
      rec.w = ck.weight("w");
      if (rec.w->type == W_Q4NX_Q41) ck.fail("w", "matmul_id takes a ggml type's rows, not a Q4NX weight");
      v[3] = ck.integer("T");
      v[4] = ck.integer("S");
      v[5] = ck.integer("B", 1);
      if (v[5] != 1 && v[5] != v[4]) ck.fail("B", "is 1 or S");
      v[6] = ck.integer("N", 1, rec.w->n);
      if (rec.w->n % v[6] != 0) ck.fail("N", "does not divide the weight's rows into whole experts");
      const unsigned __int128 TS = (unsigned __int128)v[3] * v[4];
      rec.p[0] = ck.region("x", (unsigned __int128)v[3] * v[5] * rec.w->k, F, &x);
      rec.p[1] = ck.region("ids", TS, 4, &z);
      rec.p[2] = ck.region("y", TS * v[6], F, &y);
      ck.disjointOrSame("y", y, "x", x, false);
      ck.disjointOrSame("y", y, "ids", z, false);
      break;
    }
    case K_MATMUL:
    case K_MATMUL_BT: {
      v[3] = ck.integer("batch");
      v[4] = ck.integer("M");
      v[5] = ck.integer("K");
      v[6] = ck.integer("N");
      const unsigned __int128 B = v[3];
      rec.p[0] = ck.region("a", B * v[4] * v[5], F, &x);
      rec.p[1] = ck.region("b", B * v[5] * v[6], F, &z);
      rec.p[2] = ck.region("y", B * v[4] * v[6], F, &y);
      ck.disjointOrSame("y", y, "a", x, false);
      ck.disjointOrSame("y", y, "b", z, false);
      break;
    }
    case K_RMSNORM: {
      v[3] = ck.integer("rows");
      v[4] = ck.integer("C", 1);
      rec.eps = ck.number("eps");
      if (!(rec.eps >= 0 && rec.eps < 1e30)) ck.fail("eps", "epsilon is not a finite number >= 0");
      rec.p[0] = ck.region("x", (unsigned __int128)v[3] * v[4], F, &x);
      rec.p[1] = ck.region("g", v[4], F, &z);
      rec.p[2] = ck.region("y", (unsigned __int128)v[3] * v[4], F, &y);
      ck.disjointOrSame("y", y, "x", x, true);
      ck.disjointOrSame("y", y, "g", z, false);
      break;
    }
    case K_SOFTMAX:
    case K_ROW_SUM:
    case K_ROW_MAX: {
      v[2] = ck.integer("rows");
      v[3] = ck.integer("C");
      rec.p[0] = ck.region("x", (unsigned __int128)v[2] * v[3], F, &x);
      rec.p[1] = ck.region("y", op == K_SOFTMAX ? (unsigned __int128)v[2] * v[3] : v[2], F, &y);
      ck.disjointOrSame("y", y, "x", x, op == K_SOFTMAX);
      break;
    }
    case K_EXP_SUB:
    case K_ROW_SCALE: {
      v[3] = ck.integer("rows");
      v[4] = ck.integer("C");
      const char* side = op == K_EXP_SUB ? "m" : "s";
      rec.p[0] = ck.region("x", (unsigned __int128)v[3] * v[4], F, &x);
      rec.p[1] = ck.region(side, v[3], F, &z);
      rec.p[2] = ck.region("y", (unsigned __int128)v[3] * v[4], F, &y);
      ck.disjointOrSame("y", y, "x", x, true);
      ck.disjointOrSame("y", y, side, z, false);
      break;
    }
    case K_ROPE: {
      v[2] = ck.integer("T");
      v[3] = ck.integer("H");
      v[4] = ck.integer("D", 1);
      v[5] = ck.integer("rd", 0, v[4]);
      if (v[5] % 2 != 0) ck.fail("rd", "the rotated dims are an even count");
      v[9] = ck.integer("maxPos", 1);
      const unsigned __int128 n = (unsigned __int128)v[2] * v[3] * v[4];
      rec.p[0] = ck.region("x", n, F, &x);
      rec.p[1] = ck.region("y", n, F, &y);
      rec.p[2] = ck.region("pos", v[2], F, &z);
      Range cs, sn;
      rec.p[3] = ck.region("cos", (unsigned __int128)v[9] * (v[5] / 2), F, &cs);
      uint8_t* sinp = ck.region("sin", (unsigned __int128)v[9] * (v[5] / 2), F, &sn);
      // The sin table's address is recovered from its offset when the record runs.
      v[8] = int64_t(sinp - a.base);
      ck.disjointOrSame("y", y, "x", x, true);
      for (auto [nm, rg] : {std::pair<const char*, Range>{"pos", z}, {"cos", cs}, {"sin", sn}}) ck.disjointOrSame("y", y, nm, rg, false);
      break;
    }
    case K_GATHER: {
      rec.w = ck.weight("w");
      v[3] = ck.integer("count");
      rec.p[0] = ck.region("idx", v[3], F, &x);
      rec.p[1] = ck.region("y", (unsigned __int128)v[3] * rec.w->k, F, &y);
      ck.disjointOrSame("y", y, "idx", x, false);
      break;
    }
    case K_DEQUANT: {
      rec.w = ck.weight("w");
      v[1] = ck.integer("row0", 0, rec.w->n);
      v[2] = ck.integer("rows", 0, rec.w->n - v[1]);
      rec.p[0] = ck.region("y", (unsigned __int128)v[2] * rec.w->k, F, &y);
      break;
    }
    case K_UPDATE: {
      v[3] = ck.integer("elem", 1, 4);
      if (v[3] == 3) ck.fail("elem", "an element is 1, 2 or 4 bytes");
      v[4] = ck.integer("rank", 0, 4);
      unsigned __int128 dn = 1, un = 1;
      const char* dn_[4] = {"d0", "d1", "d2", "d3"};
      const char* un_[4] = {"u0", "u1", "u2", "u3"};
      for (int i = 0; i < v[4]; i++) {
        v[5 + i] = ck.integer(dn_[i]);
        v[9 + i] = ck.integer(un_[i], 0, v[5 + i]);
        dn *= v[5 + i];
        un *= v[9 + i];
        if (dn > (unsigned __int128)MAX_INT) ck.fail(dn_[i], "the operand is too large");
      }
      rec.p[0] = ck.region("dst", dn, int(v[3]), &y);
      rec.p[1] = ck.region("upd", un, int(v[3]), &x);
      rec.p[2] = ck.region("starts", v[4], F, &z);
      ck.disjointOrSame("upd", x, "dst", y, false);
      ck.disjointOrSame("starts", z, "dst", y, false);
      break;
    }
    case K_UNARY: {
      v[0] = ck.integer("fn", 0, U_COUNT - 1);
      v[3] = ck.integer("n");
      rec.p[0] = ck.region("x", v[3], F, &x);
      rec.p[1] = ck.region("y", v[3], F, &y);
      ck.disjointOrSame("y", y, "x", x, true);
      break;
    }
    case K_BINARY:
    case K_BINARY_I32: {
      v[0] = ck.integer("fn", 0, OP_COUNT - 1);
      v[4] = ck.integer("n");
      v[5] = ck.integer("aScalar", 0, 1);
      v[6] = ck.integer("bScalar", 0, 1);
      rec.p[0] = ck.region("a", v[5] ? 1 : v[4], F, &x);
      rec.p[1] = ck.region("b", v[6] ? 1 : v[4], F, &z);
      const bool ge = v[0] == OP_GE;
      rec.p[2] = ck.region("y", v[4], ge ? 1 : F, &y);
      ck.disjointOrSame("y", y, "a", x, !ge && !v[5]);
      ck.disjointOrSame("y", y, "b", z, !ge && !v[6]);
      break;
    }
    case K_CONVERT: {
      v[0] = ck.integer("from", 0, D_COUNT - 1);
      v[1] = ck.integer("to", 0, D_COUNT - 1);
      v[4] = ck.integer("n");
      rec.p[0] = ck.region("x", v[4], dtypeBytes(int(v[0])), &x);
      rec.p[1] = ck.region("y", v[4], dtypeBytes(int(v[1])), &y);
      ck.disjointOrSame("y", y, "x", x, dtypeBytes(int(v[0])) == dtypeBytes(int(v[1])));
      break;
    }
    case K_COPY: {
      v[2] = ck.integer("bytes");
      rec.p[0] = ck.region("x", v[2], 1, &x);
      rec.p[1] = ck.region("y", v[2], 1, &y);
      break;
    }
    case K_GATHER_ROWS: {
      v[3] = ck.integer("count");
      v[4] = ck.integer("rows");
      v[5] = ck.integer("rowBytes");
      rec.p[0] = ck.region("x", (unsigned __int128)v[4] * v[5], 1, &x);
      rec.p[1] = ck.region("idx", v[3], 4, &z);
      rec.p[2] = ck.region("y", (unsigned __int128)v[3] * v[5], 1, &y);
      ck.disjointOrSame("y", y, "x", x, false);
      ck.disjointOrSame("y", y, "idx", z, false);
      break;
    }
    case K_IOTA: {
      v[1] = ck.integer("i32", 0, 1);
      v[2] = ck.integer("n");
      v[3] = ck.integer("dim", 1);
      v[4] = ck.integer("stride", 1);
      rec.p[0] = ck.region("y", v[2], 4, &y);
      break;
    }
    case K_UNARY_T: {
      v[0] = ck.integer("fn", 0, U_COUNT - 1);
      v[1] = typedDtype(ck, "dtype");
      if (v[1] == D_I32 && v[0] != U_NEG && v[0] != U_ABS) ck.fail("fn", "an i32 unary op is neg or abs");
      v[4] = ck.integer("n");
      const int eb = dtypeBytes(int(v[1]));
      rec.p[0] = ck.region("x", v[4], eb, &x);
      rec.p[1] = ck.region("y", v[4], eb, &y);
      ck.disjointOrSame("y", y, "x", x, true);
      break;
    }
    case K_BINARY_T: {
      v[0] = ck.integer("fn", 0, OP_COUNT - 1);
      v[1] = typedDtype(ck, "dtype");
      v[5] = ck.integer("n");
      v[6] = ck.integer("aScalar", 0, 1);
      v[7] = ck.integer("bScalar", 0, 1);
      const int eb = dtypeBytes(int(v[1]));
      const bool ge = v[0] == OP_GE;
      rec.p[0] = ck.region("a", v[6] ? 1 : v[5], eb, &x);
      rec.p[1] = ck.region("b", v[7] ? 1 : v[5], eb, &z);
      rec.p[2] = ck.region("y", v[5], ge ? 1 : eb, &y);
      ck.disjointOrSame("y", y, "a", x, !ge && !v[6]);
      ck.disjointOrSame("y", y, "b", z, !ge && !v[7]);
      break;
    }
    case K_REDUCE_T: {
      v[0] = ck.integer("max", 0, 1);
      v[1] = typedDtype(ck, "dtype");
      v[4] = ck.integer("rows");
      v[5] = ck.integer("C");
      const int eb = dtypeBytes(int(v[1]));
      rec.p[0] = ck.region("x", (unsigned __int128)v[4] * v[5], eb, &x);
      rec.p[1] = ck.region("y", v[4], eb, &y);
      ck.disjointOrSame("y", y, "x", x, false);
      break;
    }
    case K_MATMUL_T: {
      v[0] = typedDtype(ck, "dtype");
      v[4] = ck.integer("batch");
      v[5] = ck.integer("M");
      v[6] = ck.integer("K");
      v[7] = ck.integer("N");
      const int eb = dtypeBytes(int(v[0]));
      const unsigned __int128 B = v[4];
      rec.p[0] = ck.region("a", B * v[5] * v[6], eb, &x);
      rec.p[1] = ck.region("b", B * v[6] * v[7], eb, &z);
      rec.p[2] = ck.region("y", B * v[5] * v[7], eb, &y);
      ck.disjointOrSame("y", y, "a", x, false);
      ck.disjointOrSame("y", y, "b", z, false);
      break;
    }
    case K_ATTENTION:
    case K_ATTENTION_F16: {
      const int kvb = op == K_ATTENTION_F16 ? 2 : F;
      v[5] = ck.integer("B");
      v[6] = ck.integer("M");
      v[7] = ck.integer("D");
      v[8] = ck.integer("N");
      v[9] = ck.integer("Dv");
      rec.eps = ck.number("scale");
      if (!std::isfinite(rec.eps) || double(float(rec.eps)) != rec.eps) ck.fail("scale", "the scale is not a finite f32 value");
      v[11] = ck.integer("bB");
      v[12] = ck.integer("bG", 1);
      v[13] = ck.integer("bRow");
      // 1: k is [B, N, D] (a KV cache's rows), 0: [B, D, N]; the same elements either way.
      v[14] = ck.integer("kRows", 0, 1);
      const unsigned __int128 B = v[5], M = v[6];
      // The bias rows read: row m of head b starts at b*bB + (m / bG)*bRow and runs N elements.
      const unsigned __int128 span = B == 0 || M == 0 || v[8] == 0 ? 0
                                                                   : (B - 1) * v[11] + (unsigned __int128)((v[6] - 1) / v[12]) * v[13] + v[8];
      Range kr, vr, br;
      rec.p[0] = ck.region("q", B * M * v[7], F, &x);
      rec.p[1] = ck.region("k", B * v[7] * v[8], kvb, &kr);
      rec.p[2] = ck.region("v", B * v[8] * v[9], kvb, &vr);
      rec.p[3] = ck.region("bias", span, F, &br);
      rec.p[4] = ck.region("y", B * M * v[9], F, &y);
      for (auto [nm, rg] : {std::pair<const char*, Range>{"q", x}, {"k", kr}, {"v", vr}, {"bias", br}}) ck.disjointOrSame("y", y, nm, rg, false);
      break;
    }
    case K_COPY_STRIDED: {
      v[2] = ck.integer("elem", 1, 8);
      if (v[2] != 1 && v[2] != 2 && v[2] != 4 && v[2] != 8) ck.fail("elem", "an element is 1, 2, 4 or 8 bytes");
      v[3] = ck.integer("rank", 0, 4);
      const char* dn[4] = {"d0", "d1", "d2", "d3"};
      const char* xn[4] = {"xs0", "xs1", "xs2", "xs3"};
      const char* yn[4] = {"ys0", "ys1", "ys2", "ys3"};
      // The given dims become the last ones, leading dims extent 1, so the innermost run stays
      // innermost; the last element's index along each stride bounds the span.
      unsigned __int128 xspan = 0, yspan = 0;
      bool empty = false;
      const int lead = 4 - int(v[3]);
      for (int j = 0; j < 4; j++) {
        const int i = j - lead;
        v[4 + j] = i >= 0 ? ck.integer(dn[i]) : 1;
        v[8 + j] = i >= 0 ? ck.integer(xn[i]) : 0;
        v[12 + j] = i >= 0 ? ck.integer(yn[i]) : 0;
        if (v[4 + j] == 0) empty = true;
        else {
          xspan += (unsigned __int128)(v[4 + j] - 1) * v[8 + j];
          yspan += (unsigned __int128)(v[4 + j] - 1) * v[12 + j];
        }
      }
      rec.p[0] = ck.region("x", empty ? 0 : xspan + 1, int(v[2]), &x);
      rec.p[1] = ck.region("y", empty ? 0 : yspan + 1, int(v[2]), &y);
      ck.disjointOrSame("y", y, "x", x, false);
      break;
    }
  }
  return rec;
}

const char* kernelName(int op) { return OPS[op].name; }

int kernelFields(int op) { return op >= 0 && op < K_OP_COUNT ? int(OPS[op].fields.size()) : -1; }

const char* kernelFieldName(int op, int i) { return OPS[op].fields[size_t(i)]; }

}  // namespace host
