// The lane routines on AVX-512 (wide.cc), where the CPU has it: the same routines on 16 f32 lanes, the
// adder one instruction with round-toward-zero embedded in it. coreBlock (lanes.h) calls them when
// wideAvailable() and the caller asks for them.
#pragma once

#include "ops.h"

namespace sweep {

/** True when this build has the AVX-512 routines and the CPU (and OS) can run them. */
bool wideAvailable();

/** Path `regime` of `op`'s routine on 16 f32 inputs; false when there is no wide routine for it. */
bool coreWide(Op op, int regime, const float* x, float* got);

}  // namespace sweep
