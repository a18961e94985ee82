// JavaScript inside libtorch's autograd engine: tensor hooks (Tensor.register_hook) and custom
// Functions (torch.autograd.Function) whose code is JavaScript.
//
// The engine calls hooks and backward functions on its own threads (the thread that runs the CPU
// part of a backward, the device threads of CUDA), and JavaScript runs only on the thread of its
// environment. So while JavaScript hooks or Functions exist, backward and autograd.grad run the
// engine on a helper thread, and the JavaScript thread waits on a queue, running each call the
// engine makes into JavaScript, until the engine is done (runEngine). The gradients then come out
// exactly as PyTorch's: one engine run, each hook once with the total gradient, in the engine's
// order, through autograd.grad as well as backward.
//
// JavaScript keeps the hook and Function objects in a table by id; the C++ side holds a token per
// id whose end (the hook removed, the tensor or the graph node freed, on whatever thread) queues
// the id for JavaScript to drop (releasedAutogradIds).
#include "js-autograd.h"

#include <ATen/Parallel.h>
#include <ATen/ThreadLocalState.h>
#include <torch/csrc/autograd/custom_function.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "state.h"

namespace tailor {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// One call into JavaScript: a hook's gradient, or a Function's saved tensors and gradients.
struct Call {
  bool function = false;
  int64_t id = 0;
  std::vector<at::Tensor> tensors;
  int64_t saved = 0;
  bool gradMode = false;
  std::vector<at::Tensor> result;
  bool failed = false;
  std::string message;
  bool done = false;
};

struct Service {
  std::thread::id jsThread;
  napi_env env = nullptr;
  std::unique_ptr<Napi::FunctionReference> dispatcher;
  std::mutex mutex;
  std::condition_variable wake;    // the JavaScript thread: a call came, or an engine run ended
  std::condition_variable answer;  // the engine threads: a call was answered
  std::deque<Call*> pending;
  std::atomic<int64_t> live{0};    // hooks and Function nodes alive
  std::vector<int64_t> released;   // ids whose hook or node is gone
  std::unique_ptr<Napi::Reference<Napi::Value>> jsError;  // the first error a callback threw
};

// The service of an environment; the tokens share it, so it outlives the environment when a
// tensor or graph node does (at exit), with its JavaScript references dropped at teardown.
struct ServiceOwner {
  std::shared_ptr<Service> service = std::make_shared<Service>();
  ~ServiceOwner() {
    std::lock_guard<std::mutex> lock(service->mutex);
    service->dispatcher.reset();
    service->jsError.reset();
    service->env = nullptr;
  }
};

std::mutex ownersMutex;
std::unordered_map<napi_env, ServiceOwner*> owners;

std::shared_ptr<Service> serviceOf(Napi::Env env) {
  std::lock_guard<std::mutex> lock(ownersMutex);
  auto it = owners.find(env);
  if (it == owners.end()) throw std::runtime_error("the autograd service of this environment is not set up");
  return it->second->service;
}

struct Token {
  std::shared_ptr<Service> service;
  int64_t id;
  Token(std::shared_ptr<Service> s, int64_t i) : service(std::move(s)), id(i) { service->live++; }
  ~Token() {
    std::lock_guard<std::mutex> lock(service->mutex);
    service->released.push_back(id);
    service->live--;
  }
};

struct TokenHolder : public torch::CustomClassHolder {
  std::shared_ptr<Token> token;
  std::string name;
  TokenHolder(std::shared_ptr<Token> t, std::string n) : token(std::move(t)), name(std::move(n)) {}
};

// Runs a call on the JavaScript thread: the dispatcher gets handles it owns, returns handles (or
// null) that are read and released here.
void runCall(Service& s, Call& c) {
  Napi::Env env(s.env);
  Napi::HandleScope scope(env);
  bool before = at::GradMode::is_enabled();
  at::GradMode::set_enabled(c.gradMode);
  try {
    if (!s.dispatcher) throw std::runtime_error("no autograd dispatcher is set");
    Napi::Array handles = Napi::Array::New(env, c.tensors.size());
    for (uint32_t i = 0; i < c.tensors.size(); i++) {
      handles.Set(i, c.tensors[i].defined() ? Napi::Value(Napi::Number::New(env, putTensor(env, c.tensors[i])))
                                            : env.Null());
    }
    Napi::Value out = s.dispatcher->Call({Napi::Boolean::New(env, c.function), Napi::Number::New(env, c.id), handles,
                                          Napi::Number::New(env, c.saved)});
    if (!out.IsArray()) throw std::runtime_error("the autograd dispatcher returned no array");
    Napi::Array list = out.As<Napi::Array>();
    for (uint32_t i = 0; i < list.Length(); i++) {
      Napi::Value v = list.Get(i);
      if (v.IsNull() || v.IsUndefined()) {
        c.result.emplace_back();
      } else {
        c.result.push_back(getTensor(env, v, "gradient"));
        releaseTensor(env, v);
      }
    }
  } catch (const Napi::Error& e) {
    c.failed = true;
    c.message = e.Message();
    if (!s.jsError) s.jsError = std::make_unique<Napi::Reference<Napi::Value>>(Napi::Reference<Napi::Value>::New(e.Value(), 1));
  } catch (const c10::Error& e) {
    c.failed = true;
    c.message = e.what_without_backtrace();
  } catch (const std::exception& e) {
    c.failed = true;
    c.message = e.what();
  }
  at::GradMode::set_enabled(before);
}

// Called by the engine, on any thread: runs the call on the JavaScript thread and waits for it.
std::vector<at::Tensor> callJs(Service& s, Call& c) {
  c.gradMode = at::GradMode::is_enabled();
  if (std::this_thread::get_id() == s.jsThread) {
    if (s.env == nullptr) throw std::runtime_error("tailor: the JavaScript environment has ended");
    runCall(s, c);
  } else {
    std::unique_lock<std::mutex> lock(s.mutex);
    if (s.env == nullptr) throw std::runtime_error("tailor: the JavaScript environment has ended");
    s.pending.push_back(&c);
    s.wake.notify_all();
    s.answer.wait(lock, [&] { return c.done; });
  }
  if (c.failed) throw std::runtime_error(c.message);
  return std::move(c.result);
}

// What JavaScript's Function.apply hands over: the outputs its forward computed and what the
// forward's context asked for.
struct FunctionSpec {
  std::shared_ptr<Token> token;
  std::string name;
  variable_list outputs, saved, dirty, nonDifferentiable;
  bool materializeGrads = true;
};

}  // namespace

// Outside the anonymous namespace so that libtorch's messages, which print a node's C++ type,
// read CppNode<tailor::JavaScriptFunction>.
struct JavaScriptFunction : public torch::autograd::Function<JavaScriptFunction> {
  static variable_list forward(AutogradContext* ctx, at::TensorList inputs, std::shared_ptr<FunctionSpec> spec) {
    ctx->saved_data["tailor"] = c10::IValue::make_capsule(c10::make_intrusive<TokenHolder>(spec->token, spec->name));
    ctx->save_for_backward(spec->saved);
    if (!spec->dirty.empty()) ctx->mark_dirty(spec->dirty);
    if (!spec->nonDifferentiable.empty()) ctx->mark_non_differentiable(spec->nonDifferentiable);
    ctx->set_materialize_grads(spec->materializeGrads);
    return spec->outputs;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto holder = c10::static_intrusive_pointer_cast<TokenHolder>(ctx->saved_data["tailor"].toCapsule());
    Call c;
    c.function = true;
    c.id = holder->token->id;
    c.tensors = ctx->get_saved_variables();
    c.saved = static_cast<int64_t>(c.tensors.size());
    for (auto& g : grads) c.tensors.push_back(g);
    auto result = callJs(*holder->token->service, c);
    result.emplace_back();  // the FunctionSpec argument
    return result;
  }
};

namespace {

std::vector<at::Tensor> listOf(Napi::Env env, const Napi::Value& v, const char* what, bool nulls = false) {
  std::vector<at::Tensor> out;
  if (!v.IsArray()) throw std::invalid_argument(std::string(what) + " must be an array of tensor handles");
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) {
    Napi::Value item = a.Get(i);
    if (nulls && (item.IsNull() || item.IsUndefined())) {
      out.emplace_back();
    } else {
      out.push_back(getTensor(env, item, what));
    }
  }
  return out;
}

Napi::Value SetAutogradDispatcher(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "setAutogradDispatcher: ", [&]() -> Napi::Value {
    auto s = serviceOf(env);
    s->dispatcher = std::make_unique<Napi::FunctionReference>(Napi::Persistent(info[0].As<Napi::Function>()));
    return env.Undefined();
  });
}

// registerTensorHook(handle, id) -> the hook's position, for removeTensorHook.
Napi::Value RegisterTensorHook(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "registerHook: ", [&]() -> Napi::Value {
    const at::Tensor& t = getTensor(env, info[0]);
    auto token = std::make_shared<Token>(serviceOf(env), info[1].As<Napi::Number>().Int64Value());
    unsigned pos = t.register_hook([token](const at::Tensor& grad) -> at::Tensor {
      Call c;
      c.id = token->id;
      c.tensors = {grad};
      auto result = callJs(*token->service, c);
      return result.empty() ? at::Tensor() : result[0];
    });
    return Napi::Number::New(env, pos);
  });
}

Napi::Value RemoveTensorHook(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "removeHook: ", [&]() -> Napi::Value {
    getTensor(env, info[0]).remove_hook(info[1].As<Napi::Number>().Uint32Value());
    return env.Undefined();
  });
}

// functionApply(inputs[], outputs[], saved[] (null entries allowed), dirty[], nonDifferentiable[],
// materializeGrads, id, name) -> handles of the outputs, now with the Function as their grad_fn.
Napi::Value FunctionApply(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "Function.apply: ", [&]() -> Napi::Value {
    auto inputs = listOf(env, info[0], "inputs");
    auto spec = std::make_shared<FunctionSpec>();
    spec->outputs = listOf(env, info[1], "outputs");
    spec->saved = listOf(env, info[2], "saved", true);
    spec->dirty = listOf(env, info[3], "dirty");
    spec->nonDifferentiable = listOf(env, info[4], "nonDifferentiable");
    spec->materializeGrads = info[5].ToBoolean().Value();
    spec->token = std::make_shared<Token>(serviceOf(env), info[6].As<Napi::Number>().Int64Value());
    spec->name = info[7].As<Napi::String>().Utf8Value();
    variable_list outputs = JavaScriptFunction::apply(at::TensorList(inputs), spec);
    spec.reset();
    Napi::Array out = Napi::Array::New(env, outputs.size());
    for (uint32_t i = 0; i < outputs.size(); i++) out.Set(i, Napi::Number::New(env, putTensor(env, outputs[i])));
    return out;
  });
}

// releasedAutogradIds() -> the ids whose hook or Function node is gone since the last call.
Napi::Value ReleasedAutogradIds(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto s = serviceOf(env);
  std::vector<int64_t> ids;
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    ids.swap(s->released);
  }
  Napi::Array out = Napi::Array::New(env, ids.size());
  for (uint32_t i = 0; i < ids.size(); i++) out.Set(i, Napi::Number::New(env, static_cast<double>(ids[i])));
  return out;
}

Napi::Value JsAutogradLive(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(serviceOf(info.Env())->live.load()));
}

}  // namespace

void runEngine(Napi::Env env, const std::function<void()>& fn) {
  auto s = serviceOf(env);
  std::exception_ptr error;
  if (s->live.load() == 0) {
    try {
      fn();
    } catch (...) {
      error = std::current_exception();
    }
  } else {
    at::ThreadLocalState tls;
    bool finished = false;
    std::thread worker([&] {
      {
        // The intra-op thread count is per thread under OpenMP: the configured one, as libtorch's
        // own engine threads take it, so that kernels split their work as on the caller's thread.
        at::init_num_threads();
        at::ThreadLocalStateGuard guard(tls);
        try {
          fn();
        } catch (...) {
          error = std::current_exception();
        }
      }
      std::lock_guard<std::mutex> lock(s->mutex);
      finished = true;
      s->wake.notify_all();
    });
    for (;;) {
      Call* c = nullptr;
      {
        std::unique_lock<std::mutex> lock(s->mutex);
        s->wake.wait(lock, [&] { return finished || !s->pending.empty(); });
        if (!s->pending.empty()) {
          c = s->pending.front();
          s->pending.pop_front();
        } else {
          break;
        }
      }
      runCall(*s, *c);
      {
        std::lock_guard<std::mutex> lock(s->mutex);
        c->done = true;
      }
      s->answer.notify_all();
    }
    worker.join();
  }
  if (s->jsError) {
    Napi::Value thrown = s->jsError->Value();
    s->jsError.reset();
    throw Napi::Error(env, thrown);
  }
  if (error) std::rethrow_exception(error);
}

std::string jsFunctionName(const torch::autograd::Node* node) {
  auto* ours = dynamic_cast<const torch::autograd::CppNode<JavaScriptFunction>*>(node);
  if (ours == nullptr) return "";
  auto it = ours->ctx_.saved_data.find("tailor");
  if (it == ours->ctx_.saved_data.end()) return "";
  return c10::static_intrusive_pointer_cast<TokenHolder>(it->second.toCapsule())->name;
}

void initJsAutograd(Napi::Env env, Napi::Object exports) {
  auto* owner = new ServiceOwner();
  owner->service->jsThread = std::this_thread::get_id();
  owner->service->env = env;
  {
    std::lock_guard<std::mutex> lock(ownersMutex);
    owners[env] = owner;
  }
  napi_add_env_cleanup_hook(
      env,
      [](void* data) {
        auto* o = static_cast<ServiceOwner*>(data);
        {
          std::lock_guard<std::mutex> lock(ownersMutex);
          for (auto it = owners.begin(); it != owners.end(); ++it) {
            if (it->second == o) {
              owners.erase(it);
              break;
            }
          }
        }
        delete o;
      },
      owner);
  exports.Set("setAutogradDispatcher", Napi::Function::New(env, SetAutogradDispatcher));
  exports.Set("registerTensorHook", Napi::Function::New(env, RegisterTensorHook));
  exports.Set("removeTensorHook", Napi::Function::New(env, RemoveTensorHook));
  exports.Set("functionApply", Napi::Function::New(env, FunctionApply));
  exports.Set("releasedAutogradIds", Napi::Function::New(env, ReleasedAutogradIds));
  exports.Set("jsAutogradLive", Napi::Function::New(env, JsAutogradLive));
}

}  // namespace tailor
