// One chunk of an exhaustive sweep: a range of f32 bit patterns of the swept operand, every one run
// through the core and the reference and judged against the contract. A chunk keeps only counts, the
// worst element, the first few failures and a failure count per binade, so its memory does not grow
// with its size; the TypeScript (src/contracts/exhaustive.ts) merges chunks in order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "judge.h"
#include "ops.h"

namespace sweep {

/**
 * @internal A deliberate defect, for negative controls: for inputs whose |swept operand| lies in one
 * binade, the core's results (or the reference's) are moved `ulps` units away from zero (an f64 unit
 * for an f64 reference).
 */
struct Fault {
  enum class Kind { Core,
                    Reference };
  bool on = false;
  Kind kind = Kind::Core;
  /** The biased exponent field of the inputs it breaks (both signs). */
  uint32_t exponent = 0;
  int32_t ulps = 0;
};

struct ChunkSpec {
  Op op = Op::Neg;
  Contract contract;
  /** Round the reference to f32 once (an exact contract is judged against the oracle's f32 result). */
  bool rounded = false;
  /** The swept patterns: [from, to), to at most 2^32. */
  uint64_t from = 0;
  uint64_t to = 0;
  /** Binary ops: the other operand's pattern, and whether the swept operand is the second. */
  uint32_t fixed = 0;
  bool sweepSecond = false;
  Fault fault;
  /** Failures kept with their values (the rest are counted). */
  uint32_t maxShown = 1000;
  /** Use the AVX-512 lane routines where the CPU has them (wide.h). */
  bool wide = true;
};

struct Element {
  uint32_t a = 0;
  uint32_t b = 0;
  double got = 0;
  double want = 0;
  double error = 0;
  double bound = 0;
  double ratio = 0;
  /** A failure of add's and sub's second promise (a cancellation is exact), not of the bound. */
  bool cancellation = false;
};

struct ChunkResult {
  uint64_t elements = 0;
  uint64_t inDomain = 0;
  uint64_t failures = 0;
  bool hasWorst = false;
  bool worstBad = false;
  Element worst;
  std::vector<Element> shown;
  /** Failures per sign and exponent field of the swept operand (index: pattern >> 23). */
  uint64_t binades[512] = {};
};

/** Parses an op's name; false when the sweep has no such op. */
bool parseOp(const std::string& name, Op& op);

/** Runs one chunk. */
void runChunk(const ChunkSpec& spec, ChunkResult& out);

/** The core's and the reference's results over given patterns (a stride of 0 repeats one operand). */
struct Evaluation {
  Op op = Op::Neg;
  bool rounded = false;
  Fault fault;
  const uint32_t* a = nullptr;
  size_t aStride = 1;
  const uint32_t* b = nullptr;
  size_t bStride = 1;
  /** Unary ops: run blocks through the lane routines (lanes.h), as the sweep does; AVX-512 ones if `wide`. */
  bool lanes = false;
  bool wide = true;
  /** Which operand the fault's binade is read from. */
  bool sweepSecond = false;
  size_t n = 0;
  float* got = nullptr;
  double* want = nullptr;
};

/** Fills e.got and e.want. */
void evaluate(const Evaluation& e);

/** The lane routines against core.h over a range of patterns (blocks that take one path). */
struct LaneCheck {
  uint64_t blocks = 0;
  uint64_t mismatches = 0;
  uint32_t first = 0;
};

LaneCheck laneCheck(Op op, uint64_t from, uint64_t to, bool wide);

}  // namespace sweep
