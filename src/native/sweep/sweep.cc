// The chunk loops, one instantiation per op so the core's routine and the reference inline into it.
#include "sweep.h"

#include "lanes.h"

#include <cmath>
#include <cstring>

namespace sweep {

bool parseOp(const std::string& name, Op& op) {
  static const struct {
    const char* name;
    Op op;
  } ops[] = {
      {"neg", Op::Neg},
      {"recip", Op::Recip},
      {"exp", Op::Exp},
      {"log", Op::Log},
      {"tanh", Op::Tanh},
      {"erf", Op::Erf},
      {"sqrt", Op::Sqrt},
      {"add", Op::Add},
      {"sub", Op::Sub},
      {"mul", Op::Mul},
      {"div", Op::Div},
      {"max", Op::Max},
      {"ge", Op::Ge},
  };
  for (const auto& o : ops) {
    if (name == o.name) {
      op = o.op;
      return true;
    }
  }
  return false;
}

namespace {

/** f32.ts awayFromZero: the pattern `k` units further from zero (a zero keeps its sign). */
double awayFromZero(double x, int32_t k) {
  uint32_t b = bitsOf(x);
  if (x == 0) return fromBits((b & 0x80000000u) + static_cast<uint32_t>(k));
  return fromBits(b + static_cast<uint32_t>(k));
}

inline bool hit(const Fault& f, Fault::Kind kind, uint32_t swept) {
  return f.on && f.kind == kind && ((swept >> 23) & 0xffu) == f.exponent;
}

inline double faulted(const Fault& f, uint32_t swept, double got) {
  if (hit(f, Fault::Kind::Core, swept) && std::isfinite(got)) return awayFromZero(got, f.ulps);
  return got;
}

/** A reference moved by the fault: f32 units for a rounded one, f64 units for an f64 one. */
inline double faultedRef(const Fault& f, uint32_t swept, double want, bool rounded) {
  if (!hit(f, Fault::Kind::Reference, swept) || !std::isfinite(want)) return want;
  if (rounded) return awayFromZero(want, f.ulps);
  uint64_t b;
  std::memcpy(&b, &want, 8);
  b += static_cast<uint64_t>(static_cast<int64_t>(f.ulps));
  std::memcpy(&want, &b, 8);
  return want;
}

/** The tally of one chunk: ContractTally's rules (contractTally.ts). */
struct Tally {
  const ChunkSpec& spec;
  ChunkResult& out;

  void fail(const Element& e, uint32_t swept) {
    out.failures++;
    out.binades[swept >> 23]++;
    if (out.shown.size() < spec.maxShown) out.shown.push_back(e);
  }

  void check(uint32_t a, uint32_t b, uint32_t swept, double got, double want, double larger) {
    out.inDomain++;
    Verdict v = judge(spec.contract, got, want, larger);
    bool bad = !v.ok;
    Element e{a, b, got, want, v.error, v.bound, v.ratio, false};
    if (bad) fail(e, swept);
    // A failing element outranks a passing one; among equals the larger ratio, then the first.
    if (!out.hasWorst || (bad && !out.worstBad) || (bad == out.worstBad && v.ratio > out.worst.ratio)) {
      out.worst = e;
      out.worstBad = bad;
      out.hasWorst = true;
    }
  }
};

template <Op op>
void unaryChunk(const ChunkSpec& s, ChunkResult& out) {
  Tally t{s, out};
  const Contract& c = s.contract;
  uint32_t xb[LANES];
  double x[LANES];
  double got[LANES];
  bool in[LANES];
  auto judgeLane = [&](int k) {
    if (!in[k]) return;
    double want = faultedRef(s.fault, xb[k], refUnary<op>(x[k], s.rounded), s.rounded);
    if (!resultInDomain(c, want)) return;
    t.check(xb[k], 0, xb[k], faulted(s.fault, xb[k], got[k]), want, std::fabs(x[k]));
  };
  const bool wide = s.wide && wideAvailable();
  uint64_t i = s.from;
  for (; i + LANES <= s.to; i += LANES) {
    bool any = false;
    for (int k = 0; k < LANES; k++) {
      xb[k] = static_cast<uint32_t>(i + k);
      x[k] = fromBits(xb[k]);
      in[k] = operandInDomain(c, x[k]);
      any = any || in[k];
    }
    // Outside the domain nothing is promised, so nothing is computed.
    if (!any) continue;
    coreBlock<op>(xb, x, got, wide);
    for (int k = 0; k < LANES; k++) judgeLane(k);
  }
  for (; i < s.to; i++) {
    xb[0] = static_cast<uint32_t>(i);
    x[0] = fromBits(xb[0]);
    in[0] = operandInDomain(c, x[0]);
    got[0] = coreUnary<op>(xb[0], x[0]);
    judgeLane(0);
  }
}

template <Op op>
void binaryChunk(const ChunkSpec& s, ChunkResult& out) {
  Tally t{s, out};
  const Contract& c = s.contract;
  const double f = fromBits(s.fixed);
  const bool fixedIn = operandInDomain(c, f);
  constexpr bool additive = op == Op::Add || op == Op::Sub;
  for (uint64_t i = s.from; i < s.to; i++) {
    uint32_t sb = static_cast<uint32_t>(i);
    double sv = fromBits(sb);
    uint32_t ab = s.sweepSecond ? s.fixed : sb;
    uint32_t bb = s.sweepSecond ? sb : s.fixed;
    double a = s.sweepSecond ? f : sv;
    double b = s.sweepSecond ? sv : f;
    bool in = fixedIn && operandInDomain(c, sv);
    // The adder's second promise is checked over every input, as src/contracts/xdna2Ops.ts does.
    if (!in && !additive) continue;
    double want = faultedRef(s.fault, sb, refBinary<op>(a, b, s.rounded), s.rounded);
    in = in && resultInDomain(c, want);
    if (!in && !additive) continue;
    double got = faulted(s.fault, sb, coreBinary<op>(ab, a, bb, b));
    if (in) t.check(ab, bb, sb, got, want, std::fmax(std::fabs(a), std::fabs(b)));
    if constexpr (additive) {
      if (std::isfinite(want) && std::fabs(want) <= std::fmin(std::fabs(a), std::fabs(b)) && got != want) {
        t.fail(Element{ab, bb, got, want, std::fabs(got - want), 0, INFINITY, true}, sb);
      }
    }
  }
}

template <Op op>
void chunkOf(const ChunkSpec& s, ChunkResult& out) {
  if constexpr (isBinary(op)) binaryChunk<op>(s, out);
  else unaryChunk<op>(s, out);
}

template <Op op>
void evaluateOp(const Evaluation& e) {
  size_t i = 0;
  if constexpr (!isBinary(op)) {
    // Blocks of LANES through the lane routines, as the sweep runs them.
    if (e.lanes && e.aStride == 1) {
      double x[LANES];
      double got[LANES];
      for (; i + LANES <= e.n; i += LANES) {
        for (int k = 0; k < LANES; k++) x[k] = fromBits(e.a[i + k]);
        coreBlock<op>(e.a + i, x, got, e.wide && wideAvailable());
        for (int k = 0; k < LANES; k++) {
          e.got[i + k] = static_cast<float>(faulted(e.fault, e.a[i + k], got[k]));
          e.want[i + k] = faultedRef(e.fault, e.a[i + k], refUnary<op>(x[k], e.rounded), e.rounded);
        }
      }
    }
  }
  for (; i < e.n; i++) {
    uint32_t ab = e.a[i * e.aStride];
    double x = fromBits(ab);
    if constexpr (isBinary(op)) {
      uint32_t bb = e.b[i * e.bStride];
      double y = fromBits(bb);
      e.got[i] = static_cast<float>(faulted(e.fault, e.sweepSecond ? bb : ab, coreBinary<op>(ab, x, bb, y)));
      e.want[i] = faultedRef(e.fault, e.sweepSecond ? bb : ab, refBinary<op>(x, y, e.rounded), e.rounded);
    } else {
      e.got[i] = static_cast<float>(faulted(e.fault, ab, coreUnary<op>(ab, x)));
      e.want[i] = faultedRef(e.fault, ab, refUnary<op>(x, e.rounded), e.rounded);
    }
  }
}

/** Patterns in [from, to) where the lane routines and core.h differ, bit for bit. */
template <Op op>
LaneCheck laneCheckOp(uint64_t from, uint64_t to, bool wide) {
  LaneCheck r;
  wide = wide && wideAvailable();
  if constexpr (Lane<op>::has) {
    uint32_t xb[LANES];
    double x[LANES];
    double got[LANES];
    for (uint64_t i = from; i + LANES <= to; i += LANES) {
      for (int k = 0; k < LANES; k++) {
        xb[k] = static_cast<uint32_t>(i + k);
        x[k] = fromBits(xb[k]);
      }
      int regime = blockRegime<op>(x, LANES);
      if (regime < 0) continue;
      coreBlock<op>(xb, x, got, wide);
      r.blocks++;
      for (int k = 0; k < LANES; k++) {
        double want = coreUnary<op>(xb[k], x[k]);
        if (bitsOf(got[k]) != bitsOf(want) && !(std::isnan(got[k]) && std::isnan(want))) {
          if (r.mismatches++ == 0) r.first = xb[k];
        }
      }
    }
  }
  return r;
}

}  // namespace

#define SWEEP_OPS(X) X(Neg) X(Recip) X(Exp) X(Log) X(Tanh) X(Erf) X(Sqrt) X(Add) X(Sub) X(Mul) X(Div) X(Max) X(Ge)

void runChunk(const ChunkSpec& spec, ChunkResult& out) {
  out.elements = spec.to > spec.from ? spec.to - spec.from : 0;
  switch (spec.op) {
#define CASE(O) \
  case Op::O: chunkOf<Op::O>(spec, out); break;
    SWEEP_OPS(CASE)
#undef CASE
  }
}

LaneCheck laneCheck(Op op, uint64_t from, uint64_t to, bool wide) {
  switch (op) {
#define CASE(O) \
  case Op::O: return laneCheckOp<Op::O>(from, to, wide);
    SWEEP_OPS(CASE)
#undef CASE
  }
  return LaneCheck{};
}

void evaluate(const Evaluation& e) {
  switch (e.op) {
#define CASE(O) \
  case Op::O: evaluateOp<Op::O>(e); break;
    SWEEP_OPS(CASE)
#undef CASE
  }
}

}  // namespace sweep
