#include "zeDevice.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "errorClasses.h"

namespace npu {
namespace {

constexpr const char* kDevice = "npu4";

// The result's enumerator name and hex value, as the Level Zero spec spells them, so a user can look
// the code up.
std::string ResultName(ze_result_t r) {
  const char* name = nullptr;
  switch (r) {
    case ZE_RESULT_SUCCESS: name = "ZE_RESULT_SUCCESS"; break;
    case ZE_RESULT_NOT_READY: name = "ZE_RESULT_NOT_READY"; break;
    case ZE_RESULT_ERROR_DEVICE_LOST: name = "ZE_RESULT_ERROR_DEVICE_LOST"; break;
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY: name = "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY"; break;
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: name = "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"; break;
    case ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET: name = "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET"; break;
    case ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE: name = "ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE"; break;
    case ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS: name = "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS"; break;
    case ZE_RESULT_ERROR_NOT_AVAILABLE: name = "ZE_RESULT_ERROR_NOT_AVAILABLE"; break;
    case ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE: name = "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE"; break;
    case ZE_RESULT_ERROR_UNINITIALIZED: name = "ZE_RESULT_ERROR_UNINITIALIZED"; break;
    case ZE_RESULT_ERROR_UNSUPPORTED_VERSION: name = "ZE_RESULT_ERROR_UNSUPPORTED_VERSION"; break;
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: name = "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE"; break;
    case ZE_RESULT_ERROR_INVALID_ARGUMENT: name = "ZE_RESULT_ERROR_INVALID_ARGUMENT"; break;
    case ZE_RESULT_ERROR_INVALID_NULL_HANDLE: name = "ZE_RESULT_ERROR_INVALID_NULL_HANDLE"; break;
    case ZE_RESULT_ERROR_INVALID_NULL_POINTER: name = "ZE_RESULT_ERROR_INVALID_NULL_POINTER"; break;
    case ZE_RESULT_ERROR_INVALID_ENUMERATION: name = "ZE_RESULT_ERROR_INVALID_ENUMERATION"; break;
    case ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION: name = "ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION"; break;
    case ZE_RESULT_ERROR_UNKNOWN: name = "ZE_RESULT_ERROR_UNKNOWN"; break;
    default: break;
  }
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08x", static_cast<unsigned>(r));
  return name != nullptr ? std::string(name) + " (" + hex + ")" : std::string("result ") + hex;
}

// Every NPU over every driver, each with its driver; NoDevice naming the first call that failed and
// its result, or the count that came up empty. zeInit only starts the VPU drivers, so a GPU driver's
// state neither slows nor fails the probe.
std::vector<std::pair<ze_driver_handle_t, ze_device_handle_t>> Npus(Napi::Env env) {
  ze_result_t r = zeInit(ZE_INIT_FLAG_VPU_ONLY);
  if (r != ZE_RESULT_SUCCESS) throw NoDevice(env, kDevice, "zeInit(ZE_INIT_FLAG_VPU_ONLY) = " + ResultName(r));
  uint32_t nDrivers = 0;
  r = zeDriverGet(&nDrivers, nullptr);
  if (r != ZE_RESULT_SUCCESS) throw NoDevice(env, kDevice, "zeDriverGet = " + ResultName(r));
  if (nDrivers == 0) throw NoDevice(env, kDevice, "zeDriverGet found 0 drivers (" + ResultName(r) + ")");
  std::vector<ze_driver_handle_t> drivers(nDrivers);
  r = zeDriverGet(&nDrivers, drivers.data());
  if (r != ZE_RESULT_SUCCESS) throw NoDevice(env, kDevice, "zeDriverGet = " + ResultName(r));

  std::vector<std::pair<ze_driver_handle_t, ze_device_handle_t>> npus;
  uint32_t seen = 0;
  for (uint32_t d = 0; d < nDrivers; ++d) {
    uint32_t nDevices = 0;
    r = zeDeviceGet(drivers[d], &nDevices, nullptr);
    if (r != ZE_RESULT_SUCCESS) throw NoDevice(env, kDevice, "zeDeviceGet = " + ResultName(r));
    std::vector<ze_device_handle_t> devices(nDevices);
    r = zeDeviceGet(drivers[d], &nDevices, devices.data());
    if (r != ZE_RESULT_SUCCESS) throw NoDevice(env, kDevice, "zeDeviceGet = " + ResultName(r));
    seen += nDevices;
    for (uint32_t i = 0; i < nDevices; ++i) {
      ze_device_properties_t props{};
      props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      r = zeDeviceGetProperties(devices[i], &props);
      if (r != ZE_RESULT_SUCCESS) throw NoDevice(env, kDevice, "zeDeviceGetProperties = " + ResultName(r));
      if (props.type == ZE_DEVICE_TYPE_VPU) npus.emplace_back(drivers[d], devices[i]);
    }
  }
  if (npus.empty()) {
    throw NoDevice(env, kDevice, std::to_string(nDrivers) + " Level Zero driver(s) with " + std::to_string(seen) + " device(s), none of type ZE_DEVICE_TYPE_VPU");
  }
  return npus;
}

Napi::Error NotImplemented(Napi::Env env, const char* method) {
  return NoDevice(env, kDevice, std::string("ZeDevice.") + method + " is not implemented in this build (no hardware to check it against)");
}

}  // namespace

Napi::Function ZeDevice::Define(Napi::Env env) {
  return DefineClass(env, "ZeDevice", {
                                          StaticMethod<&ZeDevice::Probe>("probe"),
                                          InstanceMethod<&ZeDevice::LoadBlob>("loadBlob"),
                                          InstanceMethod<&ZeDevice::AllocBuffer>("allocBuffer"),
                                          InstanceMethod<&ZeDevice::Run>("run"),
                                      });
}

ZeDevice::ZeDevice(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ZeDevice>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "new ZeDevice(index): index must be a number");
  const int64_t index = info[0].As<Napi::Number>().Int64Value();
  const auto npus = Npus(env);
  if (index < 0 || index >= static_cast<int64_t>(npus.size())) {
    throw NoDevice(env, kDevice, "no Level Zero NPU at index " + std::to_string(index) + " (found " + std::to_string(npus.size()) + ")");
  }
  driver_ = npus[static_cast<size_t>(index)].first;
  device_ = npus[static_cast<size_t>(index)].second;
}

Napi::Value ZeDevice::Probe(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(Npus(info.Env()).size()));
}

Napi::Value ZeDevice::LoadBlob(const Napi::CallbackInfo& info) { throw NotImplemented(info.Env(), "loadBlob"); }
Napi::Value ZeDevice::AllocBuffer(const Napi::CallbackInfo& info) { throw NotImplemented(info.Env(), "allocBuffer"); }
Napi::Value ZeDevice::Run(const Napi::CallbackInfo& info) { throw NotImplemented(info.Env(), "run"); }

}  // namespace npu
