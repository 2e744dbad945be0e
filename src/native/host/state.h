// The addon's state for one Node environment (the main thread or one worker): the chosen SIMD path,
// the thread team, the call counters and the JS classes it throws and wraps.
#pragma once

#include <napi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "cpu.h"
#include "failure.h"
#include "kernels.h"
#include "team.h"

namespace host {

struct HostState {
  Isa isa = Isa::Scalar;
  const IsaKernels* kernels = nullptr;
  std::unique_ptr<Team> team;
  uint64_t calls = 0;    // runList calls: one per replayed step
  uint64_t kernelsRun = 0;
  Napi::FunctionReference noDevice, invalidInput, invalidOptions, indexOutOfRange, divideByZero;
  Napi::FunctionReference weightClass;
};

// This environment's state, created on first use with the widest path and one lane per core.
HostState& state(Napi::Env env);

// setErrorClasses({ NoDevice, InvalidInput, InvalidOptions, IndexOutOfRange, IntegerDivideByZero }).
void setErrorClasses(const Napi::CallbackInfo& info);

// The typed JS errors: built from the classes handed over, or a plain Error naming the code when the
// loader never handed them over (a defect of the loader, not of the input).
Napi::Error invalidInput(Napi::Env env, const std::string& path, const std::string& reason);
Napi::Error invalidOptions(Napi::Env env, const std::string& field, const std::string& reason);
Napi::Error fromFailure(Napi::Env env, const Failure& f);

}  // namespace host
