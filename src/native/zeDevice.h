// ZeDevice: the Intel NPU (NPU4, Lunar Lake) through Level Zero, where the NPU is a device of type
// ZE_DEVICE_TYPE_VPU. Only probe() and opening a device by index talk to the driver; loading a blob,
// buffers and run throw NoDevice until there is hardware to write and check them against: this addon
// never fakes a result.
#pragma once

#include <napi.h>

#include <level_zero/ze_api.h>

namespace npu {

class ZeDevice : public Napi::ObjectWrap<ZeDevice> {
 public:
  static Napi::Function Define(Napi::Env env);
  // new ZeDevice(index): takes the index-th NPU over all drivers; NoDevice when there is none there.
  explicit ZeDevice(const Napi::CallbackInfo& info);

 private:
  // ZeDevice.probe(): the number of NPUs Level Zero reports; NoDevice, with the driver's result code,
  // when zeInit fails or no driver or NPU is found.
  static Napi::Value Probe(const Napi::CallbackInfo& info);
  Napi::Value LoadBlob(const Napi::CallbackInfo& info);
  Napi::Value AllocBuffer(const Napi::CallbackInfo& info);
  Napi::Value Run(const Napi::CallbackInfo& info);

  ze_driver_handle_t driver_ = nullptr;
  ze_device_handle_t device_ = nullptr;
};

}  // namespace npu
