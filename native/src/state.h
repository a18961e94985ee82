// Shared declarations of the tailor native addon: per-instance state (a table of tensor
// handles and of resolved operators) and the conversions between JS values and IValues.
#pragma once
#include <napi.h>
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <memory>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

namespace tailor {

// The unboxed signatures of the common small operators (elementwise arithmetic, unary maths,
// comparisons, their in-place forms). A call through the boxed dispatcher boxes every argument
// into an IValue stack and unboxes it again in the kernel wrapper; for a 1-element tensor that
// is a large share of the op's cost, so operators whose schema is one of these are called typed.
using CT = const at::Tensor&;
using CS = const at::Scalar&;
using MT = at::Tensor&;
template <typename Sig>
using Typed = c10::TypedOperatorHandle<Sig>;
using FastCall = std::variant<std::monostate, Typed<at::Tensor(CT)>, Typed<at::Tensor(CT, CT)>,
                              Typed<at::Tensor(CT, CS)>, Typed<at::Tensor(CT, CT, CS)>,
                              Typed<at::Tensor(CT, CS, CS)>, Typed<MT(MT, CT)>, Typed<MT(MT, CS)>,
                              Typed<MT(MT, CT, CS)>>;

// A resolved operator: its handle, and (when its signature allows) the typed fast path with the
// schema defaults of its Scalar arguments, looked up once here instead of on every call.
struct Op {
  c10::OperatorHandle handle;
  FastCall fast;
  std::vector<c10::optional<c10::Scalar>> scalarDefaults;
};

// Tensors live in a slot table; JS holds slot numbers. This keeps JS objects tiny, needs no
// N-API finalizers (which only run when the event loop turns) and lets JS free eagerly.
struct State {
  std::vector<at::Tensor> tensors;
  std::vector<uint32_t> freeSlots;
  size_t live = 0;
  std::vector<Op> ops;
  std::unordered_map<std::string, uint32_t> opIndex;
  // State of optional parts (the distributed stores and process groups), owned here so that it
  // lives and dies with the addon instance.
  std::shared_ptr<void> distributed;
  // The captured CUDA graphs (graphs.cc).
  std::shared_ptr<void> graphs;
};

State& state(Napi::Env env);
uint32_t putTensor(Napi::Env env, at::Tensor tensor);
const at::Tensor& getTensor(Napi::Env env, const Napi::Value& handle, const char* what = "tensor");
void releaseTensor(Napi::Env env, const Napi::Value& handle);

// Converts a JS argument to the IValue the schema argument expects; throws std::invalid_argument
// with a message naming the argument when the value does not fit.
c10::IValue toIValue(Napi::Env env, const Napi::Value& value, const c10::Argument& argument);
Napi::Value fromIValue(Napi::Env env, const c10::IValue& value);
c10::Scalar toScalar(const Napi::Value& value, const c10::Argument& argument);

// Runs fn, turning C++ exceptions into JS errors prefixed with context.
template <typename F>
auto guarded(Napi::Env env, const std::string& context, F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Napi::Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw Napi::Error::New(env, context + e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, context + e.what());
  }
}

void initTensors(Napi::Env env, Napi::Object exports);
void initAutograd(Napi::Env env, Napi::Object exports);
void initDevice(Napi::Env env, Napi::Object exports);
void initDistributed(Napi::Env env, Napi::Object exports);
void initGraphs(Napi::Env env, Napi::Object exports);
void initJpeg(Napi::Env env, Napi::Object exports);
void initOpCount(Napi::Env env, Napi::Object exports);

}  // namespace tailor
