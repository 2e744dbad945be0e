// The exhaustive sweep's addon (binding.gyp target xdna2_sweep): chunks of a sweep run on libuv's
// worker threads and resolve a promise with their tally; evaluate and laneCheck answer synchronously, for
// the TypeScript's per-chunk cross-check and the tests. src/contracts/nativeSweep.ts loads it.
#include <napi.h>

#include <string>

#include "sweep.h"
#include "wide.h"

namespace {

using sweep::ChunkResult;
using sweep::ChunkSpec;
using sweep::Contract;
using sweep::DomainKind;
using sweep::ErrorKind;
using sweep::Fault;
using sweep::Op;

double num(const Napi::Object& o, const char* key, double fallback = 0) {
  Napi::Value v = o.Get(key);
  return v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : fallback;
}

Op opOf(Napi::Env env, const Napi::Value& v) {
  Op op;
  if (!v.IsString() || !sweep::parseOp(v.As<Napi::String>().Utf8Value(), op)) throw Napi::TypeError::New(env, "sweep: unknown op");
  return op;
}

Contract contractOf(Napi::Env env, const Napi::Object& o) {
  Contract c;
  std::string error = o.Get("error").ToString().Utf8Value();
  std::string domain = o.Get("domain").ToString().Utf8Value();
  if (error == "exact") c.error = ErrorKind::Exact;
  else if (error == "larger-operand") c.error = ErrorKind::LargerOperand;
  else if (error == "absrel") c.error = ErrorKind::AbsRel;
  else if (error == "rel") c.error = ErrorKind::Rel;
  else throw Napi::TypeError::New(env, "sweep: unknown error kind " + error);
  if (domain == "any") c.domain = DomainKind::Any;
  else if (domain == "not-nan") c.domain = DomainKind::NotNan;
  else if (domain == "finite") c.domain = DomainKind::Finite;
  else if (domain == "finite-normal-result") c.domain = DomainKind::FiniteNormalResult;
  else if (domain == "interval") c.domain = DomainKind::Interval;
  else if (domain == "positive-normal") c.domain = DomainKind::PositiveNormal;
  else throw Napi::TypeError::New(env, "sweep: unknown domain kind " + domain);
  c.abs = num(o, "abs");
  c.rel = num(o, "rel");
  c.lo = num(o, "lo");
  c.hi = num(o, "hi");
  return c;
}

Fault faultOf(const Napi::Value& v) {
  Fault f;
  if (!v.IsObject()) return f;
  Napi::Object o = v.As<Napi::Object>();
  f.on = true;
  f.kind = o.Get("kind").ToString().Utf8Value() == "reference" ? Fault::Kind::Reference : Fault::Kind::Core;
  f.exponent = static_cast<uint32_t>(num(o, "exponent"));
  f.ulps = static_cast<int32_t>(num(o, "ulps"));
  return f;
}

Napi::Object elementJs(Napi::Env env, const sweep::Element& e) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("a", Napi::Number::New(env, e.a));
  o.Set("b", Napi::Number::New(env, e.b));
  o.Set("got", Napi::Number::New(env, e.got));
  o.Set("want", Napi::Number::New(env, e.want));
  o.Set("error", Napi::Number::New(env, e.error));
  o.Set("bound", Napi::Number::New(env, e.bound));
  o.Set("ratio", Napi::Number::New(env, e.ratio));
  o.Set("cancellation", Napi::Boolean::New(env, e.cancellation));
  return o;
}

class ChunkWorker : public Napi::AsyncWorker {
 public:
  ChunkWorker(Napi::Env env, const ChunkSpec& spec) : Napi::AsyncWorker(env), spec_(spec), deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override { sweep::runChunk(spec_, result_); }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::Object o = Napi::Object::New(env);
    o.Set("elements", Napi::Number::New(env, static_cast<double>(result_.elements)));
    o.Set("inDomain", Napi::Number::New(env, static_cast<double>(result_.inDomain)));
    o.Set("failures", Napi::Number::New(env, static_cast<double>(result_.failures)));
    if (result_.hasWorst) {
      Napi::Object w = elementJs(env, result_.worst);
      w.Set("bad", Napi::Boolean::New(env, result_.worstBad));
      o.Set("worst", w);
    } else {
      o.Set("worst", env.Null());
    }
    Napi::Array shown = Napi::Array::New(env, result_.shown.size());
    for (size_t i = 0; i < result_.shown.size(); i++) shown.Set(static_cast<uint32_t>(i), elementJs(env, result_.shown[i]));
    o.Set("shown", shown);
    Napi::Float64Array binades = Napi::Float64Array::New(env, 512);
    for (size_t i = 0; i < 512; i++) binades[i] = static_cast<double>(result_.binades[i]);
    o.Set("binades", binades);
    deferred_.Resolve(o);
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  ChunkSpec spec_;
  ChunkResult result_;
  Napi::Promise::Deferred deferred_;
};

/** sweepChunk(spec): a promise of one chunk's tally (src/contracts/nativeSweep.ts has the types). */
Napi::Value SweepChunk(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) throw Napi::TypeError::New(env, "sweepChunk: a spec object");
  Napi::Object o = info[0].As<Napi::Object>();
  ChunkSpec s;
  s.op = opOf(env, o.Get("op"));
  if (!o.Get("contract").IsObject()) throw Napi::TypeError::New(env, "sweepChunk: a contract");
  s.contract = contractOf(env, o.Get("contract").As<Napi::Object>());
  s.rounded = o.Get("rounded").ToBoolean().Value();
  double from = num(o, "from", -1);
  double to = num(o, "to", -1);
  if (!(from >= 0 && to >= from && to <= 4294967296.0)) throw Napi::RangeError::New(env, "sweepChunk: 0 <= from <= to <= 2^32");
  s.from = static_cast<uint64_t>(from);
  s.to = static_cast<uint64_t>(to);
  s.fixed = static_cast<uint32_t>(num(o, "fixed"));
  s.sweepSecond = o.Get("sweepSecond").ToBoolean().Value();
  s.fault = faultOf(o.Get("fault"));
  s.maxShown = static_cast<uint32_t>(num(o, "maxShown", 1000));
  s.wide = !o.Get("generic").ToBoolean().Value();
  auto* w = new ChunkWorker(env, s);
  Napi::Promise p = w->promise();
  w->Queue();
  return p;
}

/** evaluate({ op, rounded, a, b?, sweepSecond?, lanes?, fault? }): { got: Float32Array, want: Float64Array }. */
Napi::Value Evaluate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) throw Napi::TypeError::New(env, "evaluate: an options object");
  Napi::Object o = info[0].As<Napi::Object>();
  sweep::Evaluation e;
  e.op = opOf(env, o.Get("op"));
  e.rounded = o.Get("rounded").ToBoolean().Value();
  e.fault = faultOf(o.Get("fault"));
  e.lanes = o.Get("lanes").ToBoolean().Value();
  e.wide = !o.Get("generic").ToBoolean().Value();
  e.sweepSecond = o.Get("sweepSecond").ToBoolean().Value();
  if (!o.Get("a").IsTypedArray() || o.Get("a").As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array) {
    throw Napi::TypeError::New(env, "evaluate: a is a Uint32Array of patterns");
  }
  Napi::Uint32Array a = o.Get("a").As<Napi::Uint32Array>();
  e.n = a.ElementLength();
  e.a = a.Data();
  Napi::Uint32Array b;
  if (sweep::isBinary(e.op)) {
    if (!o.Get("b").IsTypedArray() || o.Get("b").As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array) {
      throw Napi::TypeError::New(env, "evaluate: b is a Uint32Array of patterns");
    }
    b = o.Get("b").As<Napi::Uint32Array>();
    if (b.ElementLength() != 1 && b.ElementLength() != e.n) throw Napi::RangeError::New(env, "evaluate: b has one pattern or as many as a");
    e.b = b.Data();
    e.bStride = b.ElementLength() == 1 ? 0 : 1;
  }
  Napi::Float32Array got = Napi::Float32Array::New(env, e.n);
  Napi::Float64Array want = Napi::Float64Array::New(env, e.n);
  e.got = got.Data();
  e.want = want.Data();
  sweep::evaluate(e);
  Napi::Object out = Napi::Object::New(env);
  out.Set("got", got);
  out.Set("want", want);
  return out;
}

/** laneCheck(op, from, to, generic?): the lane routines against the scalar ones, { blocks, mismatches, first }. */
Napi::Value LaneCheck(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Op op = opOf(env, info[0]);
  double from = info[1].ToNumber().DoubleValue();
  double to = info[2].ToNumber().DoubleValue();
  if (!(from >= 0 && to >= from && to <= 4294967296.0)) throw Napi::RangeError::New(env, "laneCheck: 0 <= from <= to <= 2^32");
  sweep::LaneCheck r = sweep::laneCheck(op, static_cast<uint64_t>(from), static_cast<uint64_t>(to), !info[3].ToBoolean().Value());
  Napi::Object out = Napi::Object::New(env);
  out.Set("blocks", Napi::Number::New(env, static_cast<double>(r.blocks)));
  out.Set("mismatches", Napi::Number::New(env, static_cast<double>(r.mismatches)));
  out.Set("first", Napi::Number::New(env, r.first));
  return out;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("sweepChunk", Napi::Function::New(env, SweepChunk));
  exports.Set("evaluate", Napi::Function::New(env, Evaluate));
  exports.Set("laneCheck", Napi::Function::New(env, LaneCheck));
  // The interface's version: the loader refuses an addon built from other sources.
  exports.Set("version", Napi::Number::New(env, 1));
  // Which lane routines this CPU runs: 'avx512' (wide.cc) or 'generic' (lanes.h).
  exports.Set("isa", Napi::String::New(env, sweep::wideAvailable() ? "avx512" : "generic"));
  return exports;
}

}  // namespace

NODE_API_MODULE(xdna2_sweep, Init)
