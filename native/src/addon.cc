// The tailor native addon: a thin Node-API layer over libtorch. Operators are called generically
// through the c10 dispatcher by name and overload; arguments convert by the operator's schema.
// Operators with a common small signature (see FastCall) skip the boxing and go typed.
#include "state.h"
#include "js-autograd.h"

#include <ATen/Parallel.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/version.h>

#include <sstream>

namespace tailor {

State& state(Napi::Env env) { return *env.GetInstanceData<State>(); }

namespace {

std::string schemaString(const c10::OperatorHandle& op) {
  std::ostringstream s;
  s << op.schema();
  return s.str();
}

// The operator's signature in the letters of the FastCall alternatives: T a tensor read,
// M a tensor written in place, S a Scalar; "" when any argument or the return is of another kind.
std::string fastSignature(const c10::FunctionSchema& schema) {
  if (schema.returns().size() != 1 || schema.returns()[0].type()->kind() != c10::TypeKind::TensorType) return "";
  auto written = [](const c10::Argument& a) { return a.alias_info() && a.alias_info()->isWrite(); };
  std::string sig = written(schema.returns()[0]) ? "M(" : "T(";
  for (const auto& a : schema.arguments()) {
    switch (a.type()->kind()) {
      case c10::TypeKind::TensorType: sig += written(a) ? 'M' : 'T'; break;
      case c10::TypeKind::NumberType: sig += 'S'; break;
      default: return "";
    }
  }
  return sig + ")";
}

// Sets op.fast when the kernels were registered with exactly this C++ signature; typed() checks
// that, and an operator that does not match simply stays on the boxed path.
template <typename>
struct SignatureOf;
template <typename Sig>
struct SignatureOf<Typed<Sig>> {
  using type = Sig;
};

template <size_t Index>
void tryTyped(Op& op) {
  using Sig = typename SignatureOf<std::variant_alternative_t<Index, FastCall>>::type;
  try {
    op.fast.emplace<Index>(op.handle.typed<Sig>());
  } catch (const c10::Error&) {
    op.fast = std::monostate();
  }
}

void planFastCall(Op& op) {
  const auto& schema = op.handle.schema();
  std::string sig = fastSignature(schema);
  if (sig == "T(T)") tryTyped<1>(op);
  else if (sig == "T(TT)") tryTyped<2>(op);
  else if (sig == "T(TS)") tryTyped<3>(op);
  else if (sig == "T(TTS)") tryTyped<4>(op);
  else if (sig == "T(TSS)") tryTyped<5>(op);
  else if (sig == "M(MT)") tryTyped<6>(op);
  else if (sig == "M(MS)") tryTyped<7>(op);
  else if (sig == "M(MTS)") tryTyped<8>(op);
  if (op.fast.index() == 0) return;
  for (const auto& a : schema.arguments()) {
    const auto& d = a.default_value();
    op.scalarDefaults.push_back(d && d->isScalar() ? c10::optional<c10::Scalar>(d->toScalar()) : c10::nullopt);
  }
}

// resolve(name, overload, boxedOnly?) -> operator id; throws when no such operator exists.
// boxedOnly keeps the operator off the typed fast path (tests compare the two paths).
Napi::Value Resolve(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = info[0].As<Napi::String>().Utf8Value();
  std::string overload = info.Length() > 1 && info[1].IsString() ? info[1].As<Napi::String>().Utf8Value() : "";
  bool boxedOnly = info.Length() > 2 && info[2].ToBoolean().Value();
  State& s = state(env);
  std::string key = name + "." + overload + (boxedOnly ? "/boxed" : "");
  auto found = s.opIndex.find(key);
  if (found != s.opIndex.end()) return Napi::Number::New(env, found->second);
  std::string qualified = name.find("::") == std::string::npos ? "aten::" + name : name;
  auto handle = c10::Dispatcher::singleton().findSchema({qualified, overload});
  if (!handle) {
    throw Napi::Error::New(env, "no operator " + qualified + (overload.empty() ? "" : "." + overload) +
                                    " in this libtorch (check the name and overload against `tailor-schemas`)");
  }
  Op op{*handle, std::monostate(), {}};
  if (!boxedOnly) planFastCall(op);
  uint32_t id = static_cast<uint32_t>(s.ops.size());
  s.ops.push_back(std::move(op));
  s.opIndex.emplace(key, id);
  return Napi::Number::New(env, id);
}

// Runs the operator through its typed handle; JS arguments start at info[1].
at::Tensor callFast(Napi::Env env, const Napi::CallbackInfo& info, const Op& op) {
  const auto& arguments = op.handle.schema().arguments();
  auto T = [&](size_t i) -> const at::Tensor& { return getTensor(env, info[i + 1], arguments[i].name().c_str()); };
  auto S = [&](size_t i) -> c10::Scalar {
    Napi::Value v = info[i + 1];
    if (!v.IsUndefined()) return toScalar(v, arguments[i]);
    if (op.scalarDefaults[i]) return *op.scalarDefaults[i];
    throw std::invalid_argument("missing required argument '" + arguments[i].name() + "'");
  };
  // In-place kernels take self as a non-const reference: pass a (refcounted) copy of the handle.
  auto M = [&](size_t i) -> at::Tensor { return T(i); };
  switch (op.fast.index()) {
    case 1: return std::get<1>(op.fast).call(T(0));
    case 2: return std::get<2>(op.fast).call(T(0), T(1));
    case 3: return std::get<3>(op.fast).call(T(0), S(1));
    case 4: return std::get<4>(op.fast).call(T(0), T(1), S(2));
    case 5: return std::get<5>(op.fast).call(T(0), S(1), S(2));
    case 6: {
      at::Tensor self = M(0);
      return std::get<6>(op.fast).call(self, T(1));
    }
    case 7: {
      at::Tensor self = M(0);
      return std::get<7>(op.fast).call(self, S(1));
    }
    case 8: {
      at::Tensor self = M(0);
      return std::get<8>(op.fast).call(self, T(1), S(2));
    }
    default: throw std::logic_error("callFast: operator has no fast path");
  }
}

// call(opId, ...args) / callVoid(opId, ...args): runs the operator on the arguments (missing
// trailing ones take their schema defaults). call converts the result(s) back; callVoid drops
// them (in-place operators, whose result is self, and operators returning nothing). Arguments
// come as separate parameters, not an array, so a call allocates nothing on the JS side.
Napi::Value invoke(const Napi::CallbackInfo& info, bool discardResult) {
  Napi::Env env = info.Env();
  State& s = state(env);
  uint32_t id = info[0].As<Napi::Number>().Uint32Value();
  if (id >= s.ops.size()) throw Napi::Error::New(env, "call: unknown operator id");
  const Op& op = s.ops[id];
  const auto& schema = op.handle.schema();
  const auto& arguments = schema.arguments();
  size_t given = info.Length() - 1;
  if (given > arguments.size()) {
    throw Napi::Error::New(env, schema.name() + ": " + std::to_string(given) + " arguments given, schema takes " +
                                    std::to_string(arguments.size()) + "\n  schema: " + schemaString(op.handle));
  }
  auto fail = [&](const char* what) {
    return Napi::Error::New(env, schema.name() + (schema.overload_name().empty() ? "" : "." + schema.overload_name()) +
                                     ": " + what + "\n  schema: " + schemaString(op.handle));
  };
  torch::jit::Stack stack;
  try {
    if (op.fast.index() != 0) {
      at::Tensor result = callFast(env, info, op);
      if (discardResult) return env.Undefined();
      return result.defined() ? Napi::Value(Napi::Number::New(env, putTensor(env, std::move(result)))) : env.Null();
    }
    stack.reserve(arguments.size());
    for (size_t i = 0; i < arguments.size(); i++) {
      stack.push_back(toIValue(env, i < given ? info[i + 1] : env.Undefined(), arguments[i]));
    }
    op.handle.callBoxed(stack);
  } catch (const Napi::Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw fail(e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw fail(e.what());
  }
  if (discardResult || stack.empty()) return env.Undefined();
  if (stack.size() == 1) return fromIValue(env, stack[0]);
  Napi::Array out = Napi::Array::New(env, stack.size());
  for (uint32_t i = 0; i < stack.size(); i++) out.Set(i, fromIValue(env, stack[i]));
  return out;
}

Napi::Value Call(const Napi::CallbackInfo& info) { return invoke(info, false); }
Napi::Value CallVoid(const Napi::CallbackInfo& info) { return invoke(info, true); }

Napi::Value Schema(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  State& s = state(env);
  uint32_t id = info[0].As<Napi::Number>().Uint32Value();
  if (id >= s.ops.size()) throw Napi::Error::New(env, "schema: unknown operator id");
  return Napi::String::New(env, schemaString(s.ops[id].handle));
}

// listSchemas(prefix?) -> every registered operator schema (for code generation).
Napi::Value ListSchemas(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string prefix = info.Length() > 0 && info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "aten::";
  auto& dispatcher = c10::Dispatcher::singleton();
  std::vector<std::string> out;
  for (const auto& name : dispatcher.getAllOpNames()) {
    if (name.name.rfind(prefix, 0) != 0) continue;
    auto op = dispatcher.findOp(name);
    if (op && op->hasSchema()) out.push_back(schemaString(*op));
  }
  Napi::Array a = Napi::Array::New(env, out.size());
  for (uint32_t i = 0; i < out.size(); i++) a.Set(i, out[i]);
  return a;
}

Napi::Value SetNumThreads(const Napi::CallbackInfo& info) {
  int n = info[0].As<Napi::Number>().Int32Value();
  if (n < 1) throw Napi::Error::New(info.Env(), "setNumThreads: the thread count must be at least 1");
  at::set_num_threads(n);
  return info.Env().Undefined();
}

Napi::Value GetNumThreads(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), at::get_num_threads());
}

Napi::Value ManualSeed(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  double seed = info[0].As<Napi::Number>().DoubleValue();
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_current_seed(static_cast<uint64_t>(seed));
  return env.Undefined();
}

// The default CPU generator's full state, as bytes (for exact resume).
Napi::Value GetRngState(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "getRngState: ", [&]() -> Napi::Value {
    auto gen = at::detail::getDefaultCPUGenerator();
    at::Tensor st;
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      st = gen.get_state();
    }
    auto out = Napi::Uint8Array::New(env, st.numel());
    std::memcpy(out.Data(), st.data_ptr<uint8_t>(), st.numel());
    return out;
  });
}

Napi::Value SetRngState(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "setRngState: ", [&]() -> Napi::Value {
    Napi::Uint8Array bytes = info[0].As<Napi::Uint8Array>();
    at::Tensor st = at::empty({static_cast<int64_t>(bytes.ElementLength())}, at::kByte);
    std::memcpy(st.data_ptr<uint8_t>(), bytes.Data(), bytes.ElementLength());
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(st);
    return env.Undefined();
  });
}

}  // namespace

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData(new State());
  exports.Set("torchVersion", Napi::String::New(env, TORCH_VERSION));
  exports.Set("resolve", Napi::Function::New(env, Resolve));
  exports.Set("call", Napi::Function::New(env, Call));
  exports.Set("callVoid", Napi::Function::New(env, CallVoid));
  exports.Set("schema", Napi::Function::New(env, Schema));
  exports.Set("listSchemas", Napi::Function::New(env, ListSchemas));
  exports.Set("setNumThreads", Napi::Function::New(env, SetNumThreads));
  exports.Set("getNumThreads", Napi::Function::New(env, GetNumThreads));
  exports.Set("manualSeed", Napi::Function::New(env, ManualSeed));
  exports.Set("getRngState", Napi::Function::New(env, GetRngState));
  exports.Set("setRngState", Napi::Function::New(env, SetRngState));
  initTensors(env, exports);
  initAutograd(env, exports);
  initJsAutograd(env, exports);
  initDevice(env, exports);
  initDistributed(env, exports);
  initGraphs(env, exports);
  initJpeg(env, exports);
  initOpCount(env, exports);
  return exports;
}

}  // namespace tailor

static Napi::Object InitTailor(Napi::Env env, Napi::Object exports) { return tailor::Init(env, exports); }

NODE_API_MODULE(tailor_native, InitTailor)
