// Operator counts: how many times each dispatcher operator ran (forward and the autograd
// engine's backward alike), observed through libtorch's RecordFunction callbacks, the hook
// PyTorch's own profiler uses. On a GPU every leaf operator is at least one kernel launch, so
// comparing a step's counts with PyTorch's (torch.autograd.profiler's key_averages) shows where
// a step launches more than the reference does, on the CPU, without a GPU to time it on.
//
// opCountStart() installs one global callback (process-wide, every thread; a second start is an
// error) and opCountStop() removes it and returns {name: [calls, outermost, inForeach,
// redispatched]}: calls is every call (the operators others make inside them, too), outermost the
// calls made while no other operator of the same thread was running (what the caller asked for),
// inForeach the calls made inside a multi-tensor _foreach_ operator (its CPU fallback runs one
// call per tensor; on CUDA the _foreach_ operator is one fused kernel, so those calls are not
// launches there), redispatched the calls made directly inside a call of the same operator (an
// overload passing the work on, as add_(Scalar) to add_(Tensor): one computation, two calls).
#include <napi.h>
#include "state.h"

#ifndef TAILOR_NO_OPCOUNT
#include <ATen/record_function.h>

#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tailor {
namespace {

struct Count {
  int64_t calls = 0;
  int64_t outermost = 0;
  int64_t inForeach = 0;
  int64_t redispatched = 0;
};

struct Counts {
  std::mutex mutex;
  std::map<std::string, Count> byName;
};

// One table for the process, never freed: an operator already running on another thread when
// stop removes the callback may still finish its entry.
Counts* const counts = new Counts();
std::optional<at::CallbackHandle> handle;
// Per thread: the operators running (outermost first; their names live as long as their calls),
// and how many of them are multi-tensor _foreach_ operators (what those run inside is their CPU
// fallback's per-tensor loop).
thread_local std::vector<const char*> running;
thread_local int foreachDepth = 0;

bool isForeach(const char* name) { return std::strncmp(name, "aten::_foreach_", 15) == 0; }

std::unique_ptr<at::ObserverContext> onEnter(const at::RecordFunction& fn) {
  const char* name = fn.name();
  const bool outermost = running.empty();
  const bool sameAsParent = !outermost && std::strcmp(running.back(), name) == 0;
  const bool inForeach = foreachDepth > 0;
  running.push_back(name);
  if (isForeach(name)) ++foreachDepth;
  std::lock_guard<std::mutex> lock(counts->mutex);
  auto& entry = counts->byName[name];
  entry.calls++;
  if (outermost) entry.outermost++;
  if (inForeach) entry.inForeach++;
  if (sameAsParent) entry.redispatched++;
  return nullptr;
}

void onExit(const at::RecordFunction& fn, at::ObserverContext*) {
  if (running.empty()) return;  // entered before the counter started
  running.pop_back();
  if (isForeach(fn.name()) && foreachDepth > 0) --foreachDepth;
}

Napi::Value OpCountStart(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "opCountStart: ", [&]() -> Napi::Value {
    if (handle) throw std::runtime_error("operator counting is already on (one counter at a time)");
    {
      std::lock_guard<std::mutex> lock(counts->mutex);
      counts->byName.clear();
    }
    running.clear();
    foreachDepth = 0;
    handle = at::addGlobalCallback(at::RecordFunctionCallback(onEnter, onExit)
                                       .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION})
                                       .needsInputs(false));
    return env.Undefined();
  });
}

Napi::Value OpCountStop(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "opCountStop: ", [&]() -> Napi::Value {
    if (!handle) throw std::runtime_error("operator counting is not on");
    at::removeCallback(*handle);
    handle.reset();
    Napi::Object out = Napi::Object::New(env);
    {
      std::lock_guard<std::mutex> lock(counts->mutex);
      for (const auto& [name, n] : counts->byName) {
        Napi::Array row = Napi::Array::New(env, 4);
        row.Set(0u, Napi::Number::New(env, static_cast<double>(n.calls)));
        row.Set(1u, Napi::Number::New(env, static_cast<double>(n.outermost)));
        row.Set(2u, Napi::Number::New(env, static_cast<double>(n.inForeach)));
        row.Set(3u, Napi::Number::New(env, static_cast<double>(n.redispatched)));
        out.Set(name, row);
      }
    }
    return out;
  });
}

}  // namespace

#else
// Built without it (scripts/gpu-check.sh, where this libtorch's RecordFunction API does not
// compile): the calls say so.
namespace tailor {
namespace {
Napi::Value OpCountStart(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), "opCountStart: ", []() -> Napi::Value {
    throw std::runtime_error("operator counting was not built into this addon (see the build log)");
  });
}
Napi::Value OpCountStop(const Napi::CallbackInfo& info) { return OpCountStart(info); }
}  // namespace
#endif

void initOpCount(Napi::Env env, Napi::Object exports) {
  exports.Set("opCountStart", Napi::Function::New(env, OpCountStart));
  exports.Set("opCountStop", Napi::Function::New(env, OpCountStop));
}

}  // namespace tailor
