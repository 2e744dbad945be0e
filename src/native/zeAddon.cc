// The ze_device addon: ZeDevice and setErrorClasses. Loaded by src/devices/native.ts, which hands over
// the NoDevice class before anything else is called.
#include <napi.h>

#include "errorClasses.h"
#include "zeDevice.h"

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("setErrorClasses", Napi::Function::New<npu::SetErrorClasses>(env, "setErrorClasses"));
  exports.Set("ZeDevice", npu::ZeDevice::Define(env));
  return exports;
}

}  // namespace

NODE_API_MODULE(ze_device, Init)
