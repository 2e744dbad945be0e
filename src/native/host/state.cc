#include "state.h"

#include <thread>

namespace host {

HostState& state(Napi::Env env) {
  HostState* s = env.GetInstanceData<HostState>();
  if (s == nullptr) {
    s = new HostState();
    s->isa = bestIsa();
    s->kernels = kernelsFor(s->isa);
    const unsigned cores = std::thread::hardware_concurrency();
    s->team = std::make_unique<Team>(cores == 0 ? 1 : int(cores));
    env.SetInstanceData(s);  // deleted with the environment
  }
  return *s;
}

void setErrorClasses(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) {
    throw Napi::TypeError::New(env, "setErrorClasses expects { NoDevice, InvalidInput, InvalidOptions, IndexOutOfRange, IntegerDivideByZero }");
  }
  Napi::Object o = info[0].As<Napi::Object>();
  HostState& s = state(env);
  const std::pair<const char*, Napi::FunctionReference*> slots[] = {
      {"NoDevice", &s.noDevice},
      {"InvalidInput", &s.invalidInput},
      {"InvalidOptions", &s.invalidOptions},
      {"IndexOutOfRange", &s.indexOutOfRange},
      {"IntegerDivideByZero", &s.divideByZero},
  };
  for (const auto& [name, ref] : slots) {
    Napi::Value v = o.Get(name);
    if (!v.IsFunction()) throw Napi::TypeError::New(env, std::string("setErrorClasses: ") + name + " is not a class");
    *ref = Napi::Persistent(v.As<Napi::Function>());
  }
}

namespace {

Napi::Error build(Napi::Env env, Napi::FunctionReference& cls, const char* code, std::initializer_list<napi_value> args,
                  const std::string& message) {
  if (cls.IsEmpty()) return Napi::Error::New(env, std::string(code) + " (setErrorClasses was not called): " + message);
  return Napi::Error(env, cls.New(args));
}

}  // namespace

Napi::Error invalidInput(Napi::Env env, const std::string& path, const std::string& reason) {
  return build(env, state(env).invalidInput, "InvalidInput", {Napi::String::New(env, path), Napi::String::New(env, reason)},
               path + ": " + reason);
}

Napi::Error invalidOptions(Napi::Env env, const std::string& field, const std::string& reason) {
  return build(env, state(env).invalidOptions, "InvalidOptions", {Napi::String::New(env, field), Napi::String::New(env, reason)},
               field + ": " + reason);
}

Napi::Error fromFailure(Napi::Env env, const Failure& f) {
  HostState& s = state(env);
  switch (f.kind) {
    case Failure::Invalid: return invalidInput(env, f.path, f.what());
    case Failure::IndexOutOfRange:
      return build(env, s.indexOutOfRange, "IndexOutOfRange",
                   {Napi::Number::New(env, double(f.eqn)), Napi::Number::New(env, double(f.index)), Napi::Number::New(env, double(f.extent))},
                   f.what());
    case Failure::IntegerDivideByZero:
      return build(env, s.divideByZero, "IntegerDivideByZero", {Napi::Number::New(env, double(f.eqn))}, f.what());
  }
  return Napi::Error::New(env, f.what());
}

}  // namespace host
