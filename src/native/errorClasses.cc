#include "errorClasses.h"

namespace npu {
namespace {

struct ErrorClasses {
  Napi::FunctionReference noDevice;
};

}  // namespace

void SetErrorClasses(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) {
    throw Napi::TypeError::New(env, "setErrorClasses expects { NoDevice }");
  }
  Napi::Value cls = info[0].As<Napi::Object>().Get("NoDevice");
  if (!cls.IsFunction()) throw Napi::TypeError::New(env, "setErrorClasses: NoDevice is not a class");
  auto* classes = env.GetInstanceData<ErrorClasses>();
  if (classes == nullptr) {
    classes = new ErrorClasses();
    env.SetInstanceData(classes);  // deleted with the environment
  }
  classes->noDevice = Napi::Persistent(cls.As<Napi::Function>());
}

Napi::Error NoDevice(Napi::Env env, const char* device, const std::string& detail) {
  auto* classes = env.GetInstanceData<ErrorClasses>();
  if (classes == nullptr || classes->noDevice.IsEmpty()) {
    return Napi::Error::New(env, std::string("NoDevice (setErrorClasses was not called): ") + device + ": " + detail);
  }
  Napi::Object e = classes->noDevice.New({Napi::String::New(env, device), Napi::String::New(env, detail)});
  return Napi::Error(env, e);
}

}  // namespace npu
