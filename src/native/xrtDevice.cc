#include "xrtDevice.h"

#include <exception>
#include <string>

// XRT 2.13 (Debian's libxrt-dev, /opt/xilinx/xrt) keeps xrt_system.h under experimental/; 2.15 and
// later moved it under xrt/experimental/. binding.gyp puts the directory holding xrt/xrt_device.h on
// the include path, which serves both layouts.
#include <xrt/xrt_device.h>
#if __has_include(<xrt/experimental/xrt_system.h>)
#include <xrt/experimental/xrt_system.h>
#else
#include <experimental/xrt_system.h>
#endif
#if __has_include(<version.h>)
#include <version.h>
#endif

#include "errorClasses.h"

namespace npu {
namespace {

constexpr const char* kDevice = "xdna2";

std::string Headers() {
#ifdef XRT_DRIVER_VERSION
  std::string v = XRT_DRIVER_VERSION;  // "2.13.0,"
  if (!v.empty() && v.back() == ',') v.pop_back();
  return "built against XRT " + v;
#else
  return "built against XRT of unknown version";
#endif
}

// The number of devices XRT sees, or NoDevice: none, or XRT itself failed (it throws on a broken
// install, say a shim library it cannot load).
unsigned int Enumerate(Napi::Env env) {
  unsigned int n = 0;
  try {
    n = xrt::system::enumerate_devices();
  } catch (const std::exception& e) {
    throw NoDevice(env, kDevice, std::string("xrt::system::enumerate_devices() threw: ") + e.what() + "; " + Headers());
  }
  if (n == 0) {
    throw NoDevice(env, kDevice, "xrt::system::enumerate_devices() found 0 devices; " + Headers());
  }
  return n;
}

Napi::Error NotImplemented(Napi::Env env, const char* method) {
  return NoDevice(env, kDevice, std::string("XrtDevice.") + method + " is not implemented in this build (no hardware to check it against)");
}

}  // namespace

Napi::Function XrtDevice::Define(Napi::Env env) {
  return DefineClass(env, "XrtDevice", {
                                           StaticMethod<&XrtDevice::Probe>("probe"),
                                           InstanceMethod<&XrtDevice::LoadXclbin>("loadXclbin"),
                                           InstanceMethod<&XrtDevice::AllocBuffer>("allocBuffer"),
                                           InstanceMethod<&XrtDevice::Run>("run"),
                                       });
}

XrtDevice::XrtDevice(const Napi::CallbackInfo& info) : Napi::ObjectWrap<XrtDevice>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "new XrtDevice(index): index must be a number");
  const int64_t index = info[0].As<Napi::Number>().Int64Value();
  const unsigned int n = Enumerate(env);
  if (index < 0 || index >= static_cast<int64_t>(n)) {
    throw NoDevice(env, kDevice, "no XRT device at index " + std::to_string(index) + " (XRT sees " + std::to_string(n) + ")");
  }
  try {
    device_ = std::make_unique<xrt::device>(static_cast<unsigned int>(index));
  } catch (const std::exception& e) {
    throw NoDevice(env, kDevice, "xrt::device(" + std::to_string(index) + ") threw: " + e.what());
  }
}

XrtDevice::~XrtDevice() = default;

Napi::Value XrtDevice::Probe(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), Enumerate(info.Env()));
}

Napi::Value XrtDevice::LoadXclbin(const Napi::CallbackInfo& info) { throw NotImplemented(info.Env(), "loadXclbin"); }
Napi::Value XrtDevice::AllocBuffer(const Napi::CallbackInfo& info) { throw NotImplemented(info.Env(), "allocBuffer"); }
Napi::Value XrtDevice::Run(const Napi::CallbackInfo& info) { throw NotImplemented(info.Env(), "run"); }

}  // namespace npu
