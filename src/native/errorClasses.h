// The JS error classes an addon throws, handed over once at init by setErrorClasses({ NoDevice }), so a
// native failure reaches JS already typed (better-sqlite3's pattern) instead of as a plain Error that
// the JS side would have to parse. Shared by both addons; each addon holds its own copy per Node
// environment (the main thread and every worker), in the environment's instance data.
#pragma once

#include <napi.h>
#include <string>

namespace npu {

// setErrorClasses({ NoDevice }): stores the class for this environment; a TypeError when it is missing.
void SetErrorClasses(const Napi::CallbackInfo& info);

// A NoDevice(device, detail) built from the class handed over at init, ready to throw. Without a class
// (setErrorClasses was never called: a defect of the loader, not of the machine) it is a plain Error
// that says so.
Napi::Error NoDevice(Napi::Env env, const char* device, const std::string& detail);

}  // namespace npu
