// The xrt_device addon: XrtDevice and setErrorClasses. Loaded by src/devices/native.ts, which hands
// over the NoDevice class before anything else is called.
#include <napi.h>

#include "errorClasses.h"
#include "xrtDevice.h"

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("setErrorClasses", Napi::Function::New<npu::SetErrorClasses>(env, "setErrorClasses"));
  exports.Set("XrtDevice", npu::XrtDevice::Define(env));
  return exports;
}

}  // namespace

NODE_API_MODULE(xrt_device, Init)
