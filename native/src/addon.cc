// The tailor native addon: a thin Node-API layer over libtorch. Operators are called generically
// through the c10 dispatcher by name and overload; arguments convert by the operator's schema.
#include "state.h"

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

// resolve(name, overload) -> operator id; throws when no such operator exists.
Napi::Value Resolve(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = info[0].As<Napi::String>().Utf8Value();
  std::string overload = info.Length() > 1 && info[1].IsString() ? info[1].As<Napi::String>().Utf8Value() : "";
  State& s = state(env);
  std::string key = name + "." + overload;
  auto found = s.opIndex.find(key);
  if (found != s.opIndex.end()) return Napi::Number::New(env, found->second);
  std::string qualified = name.find("::") == std::string::npos ? "aten::" + name : name;
  auto op = c10::Dispatcher::singleton().findSchema({qualified, overload});
  if (!op) {
    throw Napi::Error::New(env, "no operator " + qualified + (overload.empty() ? "" : "." + overload) +
                                    " in this libtorch (check the name and overload against `tailor-schemas`)");
  }
  uint32_t id = static_cast<uint32_t>(s.ops.size());
  s.ops.push_back(*op);
  s.opIndex.emplace(key, id);
  return Napi::Number::New(env, id);
}

// call(opId, args[], discardResult?) -> the converted return value(s).
Napi::Value Call(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  State& s = state(env);
  uint32_t id = info[0].As<Napi::Number>().Uint32Value();
  if (id >= s.ops.size()) throw Napi::Error::New(env, "call: unknown operator id");
  const c10::OperatorHandle& op = s.ops[id];
  const auto& schema = op.schema();
  const auto& arguments = schema.arguments();
  Napi::Array args = info[1].As<Napi::Array>();
  if (args.Length() > arguments.size()) {
    throw Napi::Error::New(env, schema.name() + ": " + std::to_string(args.Length()) + " arguments given, schema takes " +
                                    std::to_string(arguments.size()) + "\n  schema: " + schemaString(op));
  }
  torch::jit::Stack stack;
  stack.reserve(arguments.size());
  try {
    for (size_t i = 0; i < arguments.size(); i++) {
      Napi::Value v = i < args.Length() ? args.Get(static_cast<uint32_t>(i)) : env.Undefined();
      stack.push_back(toIValue(env, v, arguments[i]));
    }
    op.callBoxed(stack);
  } catch (const Napi::Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw Napi::Error::New(env, schema.name() + (schema.overload_name().empty() ? "" : "." + schema.overload_name()) +
                                    ": " + e.what_without_backtrace() + "\n  schema: " + schemaString(op));
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, schema.name() + (schema.overload_name().empty() ? "" : "." + schema.overload_name()) +
                                    ": " + e.what() + "\n  schema: " + schemaString(op));
  }
  if (info.Length() > 2 && info[2].ToBoolean().Value()) return env.Undefined();
  if (stack.empty()) return env.Undefined();
  if (stack.size() == 1) return fromIValue(env, stack[0]);
  Napi::Array out = Napi::Array::New(env, stack.size());
  for (uint32_t i = 0; i < stack.size(); i++) out.Set(i, fromIValue(env, stack[i]));
  return out;
}

Napi::Value Schema(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  State& s = state(env);
  uint32_t id = info[0].As<Napi::Number>().Uint32Value();
  if (id >= s.ops.size()) throw Napi::Error::New(env, "schema: unknown operator id");
  return Napi::String::New(env, schemaString(s.ops[id]));
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
  exports.Set("schema", Napi::Function::New(env, Schema));
  exports.Set("listSchemas", Napi::Function::New(env, ListSchemas));
  exports.Set("setNumThreads", Napi::Function::New(env, SetNumThreads));
  exports.Set("getNumThreads", Napi::Function::New(env, GetNumThreads));
  exports.Set("manualSeed", Napi::Function::New(env, ManualSeed));
  exports.Set("getRngState", Napi::Function::New(env, GetRngState));
  exports.Set("setRngState", Napi::Function::New(env, SetRngState));
  initTensors(env, exports);
  initAutograd(env, exports);
  return exports;
}

}  // namespace tailor

static Napi::Object InitTailor(Napi::Env env, Napi::Object exports) { return tailor::Init(env, exports); }

NODE_API_MODULE(tailor_native, InitTailor)
