#include "list.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "failure.h"
#include "listRec.h"
#include "matmul.h"

namespace host {
namespace {

template <class T>
T* as(uint8_t* p) { return reinterpret_cast<T*>(p); }

void execute(const Ctx& base, const Arena& a, const Rec& r) {
  Ctx c = base;
  c.eqn = r.eqn;
  const int64_t* v = r.v;
  switch (r.op) {
    case K_MATMUL_W: matmulWeight(c, as<float>(r.p[0]), v[2], *r.w, as<float>(r.p[1])); return;
    case K_MATMUL_WQ: matmulWeightQ8(c, as<float>(r.p[0]), v[2], *r.w, as<float>(r.p[1])); return;
    case K_MATMUL_ID:
    case K_MATMUL_IDQ:
      matmulId(c, as<float>(r.p[0]), as<int32_t>(r.p[1]), as<float>(r.p[2]), v[3], v[4], v[5], v[6], *r.w, r.op == K_MATMUL_IDQ);
      return;
    case K_MATMUL: matmulF32(c, as<float>(r.p[0]), as<float>(r.p[1]), as<float>(r.p[2]), v[3], v[4], v[5], v[6]); return;
    case K_RMSNORM: rmsnorm(c, as<float>(r.p[0]), as<float>(r.p[1]), as<float>(r.p[2]), v[3], v[4], float(r.eps)); return;
    case K_SOFTMAX: softmax(c, as<float>(r.p[0]), as<float>(r.p[1]), v[2], v[3]); return;
    case K_ROW_SUM: rowReduce(c, false, as<float>(r.p[0]), as<float>(r.p[1]), v[2], v[3]); return;
    case K_ROW_MAX: rowReduce(c, true, as<float>(r.p[0]), as<float>(r.p[1]), v[2], v[3]); return;
    case K_EXP_SUB: expSub(c, as<float>(r.p[0]), as<float>(r.p[1]), as<float>(r.p[2]), v[3], v[4]); return;
    case K_ROW_SCALE: rowScale(c, as<float>(r.p[0]), as<float>(r.p[1]), as<float>(r.p[2]), v[3], v[4]); return;
    case K_ROPE:
      ropeNeox(c, as<float>(r.p[0]), as<float>(r.p[1]), v[2], v[3], v[4], v[5], as<int32_t>(r.p[2]),
               as<float>(r.p[3]), as<float>(a.base + v[8]), v[9]);
      return;
    case K_GATHER: gather(c, *r.w, as<int32_t>(r.p[0]), v[3], as<float>(r.p[1])); return;
    case K_DEQUANT: dequantRows(c, *r.w, v[1], v[2], as<float>(r.p[0])); return;
    case K_UPDATE:
      updateSlice(c, r.p[0], v + 5, r.p[1], v + 9, as<int32_t>(r.p[2]), int(v[4]), int(v[3]));
      return;
    case K_UNARY: unaryF32(c, int(v[0]), as<float>(r.p[0]), as<float>(r.p[1]), v[3]); return;
    case K_BINARY:
      binaryF32(c, int(v[0]), as<float>(r.p[0]), v[5] != 0, as<float>(r.p[1]), v[6] != 0, r.p[2], v[4]);
      return;
    case K_BINARY_I32:
      binaryI32(c, int(v[0]), as<int32_t>(r.p[0]), v[5] != 0, as<int32_t>(r.p[1]), v[6] != 0, r.p[2], v[4]);
      return;
    case K_CONVERT: convert(c, int(v[0]), int(v[1]), r.p[0], r.p[1], v[4]); return;
    case K_COPY: std::memmove(r.p[1], r.p[0], size_t(v[2])); return;
    case K_MATMUL_BT: matmulF32T(c, as<float>(r.p[0]), as<float>(r.p[1]), as<float>(r.p[2]), v[3], v[4], v[5], v[6]); return;
    case K_COPY_STRIDED: copyStrided(r.p[1], v + 12, r.p[0], v + 8, v + 4, int(v[2])); return;
    case K_GATHER_ROWS: {
      // Rows of a table in the arena by i32 index, byte for byte; every index is checked first.
      const int32_t* idx = as<int32_t>(r.p[1]);
      for (int64_t j = 0; j < v[3]; j++) {
        if (idx[j] < 0 || idx[j] >= v[4]) throw Failure::outOfRange(c.eqn, idx[j], v[4]);
      }
      for (int64_t j = 0; j < v[3]; j++) std::memcpy(r.p[2] + j * v[5], r.p[0] + int64_t(idx[j]) * v[5], size_t(v[5]));
      return;
    }
    case K_UNARY_T: unaryTyped(c, int(v[0]), int(v[1]), r.p[0], r.p[1], v[4]); return;
    case K_BINARY_T: binaryTyped(c, int(v[0]), int(v[1]), r.p[0], v[6] != 0, r.p[1], v[7] != 0, r.p[2], v[5]); return;
    case K_REDUCE_T: reduceTyped(c, v[0] != 0, int(v[1]), r.p[0], r.p[1], v[4], v[5]); return;
    case K_MATMUL_T: matmulTyped(c, int(v[0]), r.p[0], r.p[1], r.p[2], v[4], v[5], v[6], v[7]); return;
    case K_ATTENTION:
      attention(c, as<float>(r.p[0]), as<float>(r.p[1]), as<float>(r.p[2]), as<float>(r.p[3]), as<float>(r.p[4]),
                v[5], v[6], v[7], v[8], v[9], float(r.eps), v[11], v[12], v[13], v[14] != 0);
      return;
    case K_ATTENTION_F16:
      attentionF16(c, as<float>(r.p[0]), as<uint16_t>(r.p[1]), as<uint16_t>(r.p[2]), as<float>(r.p[3]), as<float>(r.p[4]),
                   v[5], v[6], v[7], v[8], v[9], float(r.eps), v[11], v[12], v[13], v[14] != 0);
      return;
    case K_IOTA:
      // Each element is its index along one dimension: (flat index / stride) % dim, exact in f32
      // up to 2^24 (the checker's n bounds every value by the element count).
      for (int64_t i = 0; i < v[2]; i++) {
        const int64_t k = (i / v[4]) % v[3];
        if (v[1] != 0) as<int32_t>(r.p[0])[i] = int32_t(k);
        else as<float>(r.p[0])[i] = float(k);
      }
      return;
  }
}

}  // namespace

size_t runList(const Ctx& c, const Arena& arena, const double* list, size_t words, const std::vector<WeightView>& weights) {
  std::vector<Rec> recs;
  size_t at = 0;
  while (at < words) {
    const double op = list[at];
    const size_t index = recs.size();
    if (!(op == std::floor(op)) || op < 0 || op >= K_OP_COUNT) {
      throw Failure::invalid("/kernels/" + std::to_string(index), "unknown kernel op " + std::to_string(op) + " at word " + std::to_string(at));
    }
    const size_t len = 2 + size_t(kernelFields(int(op)));
    if (at + len > words) {
      throw Failure::invalid("/kernels/" + std::to_string(index), std::string(kernelName(int(op))) + ": the list ends inside the record (" +
                                                                      std::to_string(words - at) + " of " + std::to_string(len) + " words)");
    }
    recs.push_back(checkRecord(arena, weights, index, list + at, int(op)));
    at += len;
  }
  // NPU_OFFLOAD_HOST_PROFILE=1 prints each step's time per kernel op to stderr (a developer's tool);
  // =cpu prints the process's CPU time instead of the wall time (every lane's, spinning included:
  // what a step costs on a machine shared with other work).
  static const char* profileEnv = std::getenv("NPU_OFFLOAD_HOST_PROFILE");
  static const bool profile = profileEnv != nullptr;
#ifdef _WIN32
  static const bool profileCpu = false;
#else
  static const bool profileCpu = profile && std::strcmp(profileEnv, "cpu") == 0;
#endif
  if (!profile) {
    for (const Rec& r : recs) execute(c, arena, r);
    return recs.size();
  }
  double ms[K_OP_COUNT] = {};
  int count[K_OP_COUNT] = {};
  for (const Rec& r : recs) {
#ifndef _WIN32
    if (profileCpu) {
      timespec a{}, b{};
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
      execute(c, arena, r);
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
      ms[r.op] += double(b.tv_sec - a.tv_sec) * 1e3 + double(b.tv_nsec - a.tv_nsec) / 1e6;
      count[r.op]++;
      continue;
    }
#endif
    const auto t0 = std::chrono::steady_clock::now();
    execute(c, arena, r);
    ms[r.op] += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    count[r.op]++;
  }
  std::string line = "host profile:";
  for (int op = 0; op < K_OP_COUNT; op++) {
    if (count[op] == 0) continue;
    char buf[96];
    std::snprintf(buf, sizeof buf, " %s %d/%.2fms", kernelName(op), count[op], ms[op]);
    line += buf;
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  return recs.size();
}

}  // namespace host
