// Autograd: requires_grad, backward, grad read/write, autograd.grad and grad mode.
#include "state.h"
#include "js-autograd.h"

#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/forward_grad.h>
// The vmap level counter of PyTorch's torch.vmap (the batching of _add_batch_dim /
// _remove_batch_dim); the header was renamed when functorch's vmap moved into ATen.
#if __has_include(<ATen/LegacyVmapMode.h>)
#include <ATen/LegacyVmapMode.h>
#else
#include <ATen/VmapMode.h>
#endif
#include <c10/core/impl/LocalDispatchKeySet.h>
#if __has_include(<ATen/LegacyBatchedTensorImpl.h>)
#include <ATen/LegacyBatchedTensorImpl.h>
#else
#include <ATen/BatchedTensorImpl.h>
#endif

namespace tailor {
namespace {

Napi::Value SetRequiresGrad(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "requiresGrad_: ", [&]() -> Napi::Value {
    at::Tensor t = getTensor(env, info[0]);
    t.set_requires_grad(info[1].ToBoolean().Value());
    return env.Undefined();
  });
}

Napi::Value RequiresGrad(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "requiresGrad: ", [&]() -> Napi::Value {
    return Napi::Boolean::New(env, getTensor(env, info[0]).requires_grad());
  });
}

Napi::Value IsLeaf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "isLeaf: ", [&]() -> Napi::Value {
    return Napi::Boolean::New(env, getTensor(env, info[0]).is_leaf());
  });
}

Napi::Value GradFnName(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "gradFn: ", [&]() -> Napi::Value {
    const auto& fn = getTensor(env, info[0]).grad_fn();
    if (!fn) return env.Null();
    std::string js = jsFunctionName(fn.get());
    return Napi::String::New(env, js.empty() ? fn->name() : js);
  });
}

// grad(handle) -> a new handle to .grad, or null when there is none.
Napi::Value Grad(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "grad: ", [&]() -> Napi::Value {
    const at::Tensor& g = getTensor(env, info[0]).grad();
    if (!g.defined()) return env.Null();
    return Napi::Number::New(env, putTensor(env, g));
  });
}

// setGrad(handle, gradHandle | null): null clears the gradient (zero_grad(set_to_none=True)).
Napi::Value SetGrad(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "setGrad: ", [&]() -> Napi::Value {
    at::Tensor t = getTensor(env, info[0]);
    if (info[1].IsNull() || info[1].IsUndefined()) {
      t.mutable_grad() = at::Tensor();
    } else {
      t.mutable_grad() = getTensor(env, info[1], "grad");
    }
    return env.Undefined();
  });
}

// backward(handle, gradHandle | null, retainGraph, createGraph)
Napi::Value Backward(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "backward: ", [&]() -> Napi::Value {
    at::Tensor t = getTensor(env, info[0]);
    std::vector<at::Tensor> grads;
    if (!(info[1].IsNull() || info[1].IsUndefined())) {
      grads.push_back(getTensor(env, info[1], "gradient"));
    } else if (t.numel() != 1) {
      throw std::invalid_argument("backward() without a gradient needs a scalar (one-element) tensor; this one has shape " +
                                  c10::str(t.sizes()));
    }
    bool retain = info.Length() > 2 && info[2].ToBoolean().Value();
    bool create = info.Length() > 3 && info[3].ToBoolean().Value();
    runEngine(env, [&] { torch::autograd::backward({t}, grads, retain, create); });
    return env.Undefined();
  });
}

std::vector<at::Tensor> tensorList(Napi::Env env, const Napi::Value& v, const char* what) {
  std::vector<at::Tensor> out;
  if (v.IsNull() || v.IsUndefined()) return out;
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) out.push_back(getTensor(env, a.Get(i), what));
  return out;
}

// autogradGrad(outputs[], inputs[], gradOutputs[] | null, retainGraph, createGraph, allowUnused)
Napi::Value AutogradGrad(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "autograd.grad: ", [&]() -> Napi::Value {
    auto outputs = tensorList(env, info[0], "outputs");
    auto inputs = tensorList(env, info[1], "inputs");
    auto gradOutputs = tensorList(env, info[2], "gradOutputs");
    bool create = info[4].ToBoolean().Value();
    c10::optional<bool> retain;
    if (info[3].IsBoolean()) retain = info[3].ToBoolean().Value();
    bool allowUnused = info[5].ToBoolean().Value();
    std::vector<at::Tensor> result;
    runEngine(env, [&] { result = torch::autograd::grad(outputs, inputs, gradOutputs, retain, create, allowUnused); });
    Napi::Array out = Napi::Array::New(env, result.size());
    for (uint32_t i = 0; i < result.size(); i++) {
      out.Set(i, result[i].defined() ? Napi::Value(Napi::Number::New(env, putTensor(env, result[i]))) : env.Null());
    }
    return out;
  });
}

// enterDualLevel() -> the new forward-mode AD level (libtorch allows one at a time).
Napi::Value EnterDualLevel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "forwardAd.enterDualLevel: ", [&]() -> Napi::Value {
    return Napi::Number::New(env, static_cast<double>(torch::autograd::ForwardADLevel::get_next_idx()));
  });
}

// exitDualLevel(level): ends the level, which clears the tangents of every dual tensor of it.
Napi::Value ExitDualLevel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "forwardAd.exitDualLevel: ", [&]() -> Napi::Value {
    torch::autograd::ForwardADLevel::release_idx(static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value()));
    return env.Undefined();
  });
}

// vmapIncrementNesting() -> the new vmap level; vmapDecrementNesting() -> the level left. While the
// level is above 0 the VmapMode dispatch key is on, so random and factory operations see they run
// under vmap, as with Python's torch._C._vmapmode_increment_nesting.
Napi::Value VmapIncrementNesting(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(at::impl::VmapMode::increment_nesting()));
}

Napi::Value VmapDecrementNesting(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "vmap: ", [&]() -> Napi::Value {
    TORCH_CHECK(at::impl::VmapMode::current_vmap_level() > 0, "no vmap level to leave");
    return Napi::Number::New(env, static_cast<double>(at::impl::VmapMode::decrement_nesting()));
  });
}

// vmapBatchDim(tensor, level) -> the physical dimension the vmap level `level` maps over in the
// tensor, or -1 when the tensor is not batched at that level. tailor's own batching rules
// (src/torch/vmap-rules.ts) need it to tell a mapped weight from a shared one.
Napi::Value VmapBatchDim(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "vmap: ", [&]() -> Napi::Value {
    const at::Tensor& t = getTensor(env, info[0]);
    const int64_t level = info[1].As<Napi::Number>().Int64Value();
    const at::BatchedTensorImpl* impl = at::maybeGetBatchedImpl(t);
    if (impl != nullptr)
      for (const auto& bdim : impl->bdims())
        if (bdim.level() == level) return Napi::Number::New(env, static_cast<double>(bdim.dim()));
    return Napi::Number::New(env, -1);
  });
}

// outsideVmapMode(fn) -> fn(): runs fn with the VmapMode dispatch key excluded, so that random
// operators run as outside vmap (vmap's randomness 'same' and 'different', src/torch/vmap-random.ts).
// The vmap levels and the batched tensors stay as they are.
Napi::Value OutsideVmapMode(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsFunction()) {
    Napi::TypeError::New(env, "outsideVmapMode: expects a function").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  c10::impl::ExcludeDispatchKeyGuard guard(c10::DispatchKey::VmapMode);
  return info[0].As<Napi::Function>().Call({});
}

Napi::Value SetGradEnabled(const Napi::CallbackInfo& info) {
  at::GradMode::set_enabled(info[0].ToBoolean().Value());
  return info.Env().Undefined();
}

Napi::Value IsGradEnabled(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), at::GradMode::is_enabled());
}

}  // namespace

void initAutograd(Napi::Env env, Napi::Object exports) {
  exports.Set("setRequiresGrad", Napi::Function::New(env, SetRequiresGrad));
  exports.Set("requiresGrad", Napi::Function::New(env, RequiresGrad));
  exports.Set("isLeaf", Napi::Function::New(env, IsLeaf));
  exports.Set("gradFnName", Napi::Function::New(env, GradFnName));
  exports.Set("grad", Napi::Function::New(env, Grad));
  exports.Set("setGrad", Napi::Function::New(env, SetGrad));
  exports.Set("backward", Napi::Function::New(env, Backward));
  exports.Set("autogradGrad", Napi::Function::New(env, AutogradGrad));
  exports.Set("enterDualLevel", Napi::Function::New(env, EnterDualLevel));
  exports.Set("exitDualLevel", Napi::Function::New(env, ExitDualLevel));
  exports.Set("vmapIncrementNesting", Napi::Function::New(env, VmapIncrementNesting));
  exports.Set("vmapDecrementNesting", Napi::Function::New(env, VmapDecrementNesting));
  exports.Set("vmapBatchDim", Napi::Function::New(env, VmapBatchDim));
  exports.Set("outsideVmapMode", Napi::Function::New(env, OutsideVmapMode));
  exports.Set("setGradEnabled", Napi::Function::New(env, SetGradEnabled));
  exports.Set("isGradEnabled", Napi::Function::New(env, IsGradEnabled));
}

}  // namespace tailor
