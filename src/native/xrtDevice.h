// XrtDevice: the AMD XDNA2 NPU through XRT (the Xilinx Runtime). Only probe() and opening a device by
// index talk to the driver; load, buffers and run throw NoDevice until there is hardware to write and
// check them against: this addon never fakes a result.
#pragma once

#include <napi.h>
#include <memory>

namespace xrt {
class device;
}

namespace npu {

class XrtDevice : public Napi::ObjectWrap<XrtDevice> {
 public:
  static Napi::Function Define(Napi::Env env);
  // new XrtDevice(index): opens XRT device `index`; NoDevice when there is none at that index.
  explicit XrtDevice(const Napi::CallbackInfo& info);
  ~XrtDevice() override;

 private:
  // XrtDevice.probe(): the number of devices XRT enumerates; NoDevice when it finds none.
  static Napi::Value Probe(const Napi::CallbackInfo& info);
  Napi::Value LoadXclbin(const Napi::CallbackInfo& info);
  Napi::Value AllocBuffer(const Napi::CallbackInfo& info);
  Napi::Value Run(const Napi::CallbackInfo& info);

  std::unique_ptr<xrt::device> device_;
};

}  // namespace npu
