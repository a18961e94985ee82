// libtorch's c10d, bound thinly: stores (TCPStore, FileStore), process groups (Gloo; NCCL where
// the libtorch has it) and the collectives tailor's data parallelism needs. The collectives are
// libtorch's own; this file only converts arguments, waits with a deadline and reports failures.
#include "state.h"

#include <torch/version.h>

#ifdef TAILOR_GLOO
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef TAILOR_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#endif

#include <chrono>

namespace tailor {

#ifdef TAILOR_GLOO
namespace {

// From 2.0 the backends derive from c10d::Backend; in 1.13 they were ProcessGroups themselves.
#if TORCH_VERSION_MAJOR >= 2
using GroupBase = c10d::Backend;
#else
using GroupBase = c10d::ProcessGroup;
#endif

struct Group {
  c10::intrusive_ptr<GroupBase> pg;
  std::string backend;
  int rank = 0;
  int size = 1;
  std::chrono::milliseconds timeout{0};
  bool failed = false;
};

struct Distributed {
  std::vector<c10::intrusive_ptr<c10d::Store>> stores;
  std::vector<Group> groups;
  ~Distributed() {
    // A group whose peer failed may have a transport thread blocked until its own deadline;
    // destroying it would join that thread. The process is ending with an error: leave it.
    for (auto& g : groups) {
      if (g.failed && g.pg) (void)g.pg.release();
    }
  }
};

Distributed& dist(Napi::Env env) {
  State& s = state(env);
  if (!s.distributed) s.distributed = std::make_shared<Distributed>();
  return *static_cast<Distributed*>(s.distributed.get());
}

std::chrono::milliseconds msArg(const Napi::Value& v, const char* what) {
  double ms = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : -1;
  if (!(ms > 0)) throw std::invalid_argument(std::string(what) + " must be a positive number of milliseconds");
  return std::chrono::milliseconds(static_cast<int64_t>(ms));
}

// A collective that failed (a peer closed its connection, or nothing arrived before the deadline)
// becomes a JS error carrying c10dFailure = true, which the TypeScript side names.
Napi::Error peerFailure(Napi::Env env, Group& g, const std::string& op, const std::string& what) {
  g.failed = true;
  auto e = Napi::Error::New(env, "c10d " + op + " on rank " + std::to_string(g.rank) + " of " +
                                     std::to_string(g.size) + " failed: " + what);
  e.Set("c10dFailure", Napi::Boolean::New(env, true));
  return e;
}

Group& groupArg(Napi::Env env, const Napi::Value& v) {
  auto& d = dist(env);
  uint32_t id = v.As<Napi::Number>().Uint32Value();
  if (id >= d.groups.size() || !d.groups[id].pg) throw Napi::Error::New(env, "c10d: unknown or destroyed process group");
  return d.groups[id];
}

std::vector<at::Tensor> tensorsArg(Napi::Env env, const Napi::Value& v) {
  if (!v.IsArray()) throw std::invalid_argument("tensors must be an array of tensors");
  Napi::Array a = v.As<Napi::Array>();
  std::vector<at::Tensor> out;
  for (uint32_t i = 0; i < a.Length(); i++) out.push_back(getTensor(env, a.Get(i), "tensors"));
  return out;
}

// Waits for the work with the group's deadline; turns any failure into a named peer failure.
void waitFor(Napi::Env env, Group& g, const std::string& op, const c10::intrusive_ptr<c10d::Work>& work) {
  try {
    if (!work->wait(g.timeout)) throw std::runtime_error("timed out");
  } catch (const c10::Error& e) {
    throw peerFailure(env, g, op, e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw peerFailure(env, g, op, e.what());
  }
}

// createStore({kind:'tcp', host, port, isServer, worldSize, timeoutMs} | {kind:'file', path, worldSize, timeoutMs})
Napi::Value CreateStore(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "c10d store: ", [&]() -> Napi::Value {
    Napi::Object o = info[0].As<Napi::Object>();
    std::string kind = o.Get("kind").As<Napi::String>().Utf8Value();
    auto timeout = msArg(o.Get("timeoutMs"), "timeoutMs");
    int worldSize = o.Get("worldSize").As<Napi::Number>().Int32Value();
    c10::intrusive_ptr<c10d::Store> store;
    if (kind == "tcp") {
      c10d::TCPStoreOptions opts;
      int port = o.Get("port").As<Napi::Number>().Int32Value();
      if (port < 1 || port > 65535) throw std::invalid_argument("port must be in 1..65535");
      opts.port = static_cast<uint16_t>(port);
      opts.isServer = o.Get("isServer").ToBoolean().Value();
      opts.numWorkers = worldSize;
      opts.waitWorkers = true;
      opts.timeout = timeout;
      store = c10::make_intrusive<c10d::TCPStore>(o.Get("host").As<Napi::String>().Utf8Value(), opts);
    } else if (kind == "file") {
      store = c10::make_intrusive<c10d::FileStore>(o.Get("path").As<Napi::String>().Utf8Value(), worldSize);
      store->setTimeout(timeout);
    } else {
      throw std::invalid_argument("store kind must be 'tcp' or 'file'");
    }
    auto& d = dist(env);
    d.stores.push_back(store);
    return Napi::Number::New(env, static_cast<double>(d.stores.size() - 1));
  });
}

c10::intrusive_ptr<c10d::Store>& storeArg(Napi::Env env, const Napi::Value& v) {
  auto& d = dist(env);
  uint32_t id = v.As<Napi::Number>().Uint32Value();
  if (id >= d.stores.size()) throw Napi::Error::New(env, "c10d: unknown store");
  return d.stores[id];
}

Napi::Value StoreSet(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "c10d store set: ", [&]() -> Napi::Value {
    std::string value = info[2].As<Napi::String>().Utf8Value();
    storeArg(env, info[0])->set(info[1].As<Napi::String>().Utf8Value(), std::vector<uint8_t>(value.begin(), value.end()));
    return env.Undefined();
  });
}

// storeGet waits (up to the store's timeout) for the key.
Napi::Value StoreGet(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "c10d store get: ", [&]() -> Napi::Value {
    auto bytes = storeArg(env, info[0])->get(info[1].As<Napi::String>().Utf8Value());
    return Napi::String::New(env, std::string(bytes.begin(), bytes.end()));
  });
}

// createProcessGroup(storeId, {backend, rank, size, timeoutMs, iface?, hostname?, threads?})
Napi::Value CreateProcessGroup(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "c10d process group: ", [&]() -> Napi::Value {
    auto store = storeArg(env, info[0]);
    Napi::Object o = info[1].As<Napi::Object>();
    Group g;
    g.backend = o.Get("backend").As<Napi::String>().Utf8Value();
    g.rank = o.Get("rank").As<Napi::Number>().Int32Value();
    g.size = o.Get("size").As<Napi::Number>().Int32Value();
    if (g.size < 1 || g.rank < 0 || g.rank >= g.size) throw std::invalid_argument("rank must be in 0..size-1");
    g.timeout = msArg(o.Get("timeoutMs"), "timeoutMs");
    if (g.backend == "gloo") {
      auto opts = c10d::ProcessGroupGloo::Options::create(g.timeout);
      if (o.Get("iface").IsString()) {
        opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(o.Get("iface").As<Napi::String>().Utf8Value()));
      } else if (o.Get("hostname").IsString()) {
        opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(o.Get("hostname").As<Napi::String>().Utf8Value()));
      } else {
        opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      }
      opts->threads = o.Get("threads").IsNumber() ? o.Get("threads").As<Napi::Number>().Int32Value() : 2;
      g.pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, g.rank, g.size, opts);
    } else if (g.backend == "nccl") {
#ifdef TAILOR_NCCL
      auto opts = c10d::ProcessGroupNCCL::Options::create();
      opts->timeout = g.timeout;
      g.pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, g.rank, g.size, opts);
#else
      throw std::invalid_argument("this addon was built without NCCL (the selected libtorch has none, or its NCCL and "
                                  "CUDA headers were not found); use the gloo backend");
#endif
    } else {
      throw std::invalid_argument("backend must be 'gloo' or 'nccl', not '" + g.backend + "'");
    }
    auto& d = dist(env);
    d.groups.push_back(std::move(g));
    return Napi::Number::New(env, static_cast<double>(d.groups.size() - 1));
  });
}

c10d::ReduceOp reduceOp(const std::string& name) {
  if (name == "sum") return c10d::ReduceOp::SUM;
  if (name == "max") return c10d::ReduceOp::MAX;
  if (name == "min") return c10d::ReduceOp::MIN;
  if (name == "product") return c10d::ReduceOp::PRODUCT;
  throw std::invalid_argument("reduce op must be sum, max, min or product, not '" + name + "'");
}

// allreduce(groupId, [tensor], op): in place, one tensor per call (c10d's per-process convention).
Napi::Value Allreduce(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Group& g = groupArg(env, info[0]);
  c10::intrusive_ptr<c10d::Work> work;
  guarded(env, "c10d allreduce: ", [&]() {
    auto tensors = tensorsArg(env, info[1]);
    c10d::AllreduceOptions opts;
    opts.reduceOp = reduceOp(info[2].IsString() ? info[2].As<Napi::String>().Utf8Value() : "sum");
    opts.timeout = g.timeout;
    work = g.pg->allreduce(tensors, opts);
  });
  waitFor(env, g, "allreduce", work);
  return env.Undefined();
}

Napi::Value Broadcast(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Group& g = groupArg(env, info[0]);
  c10::intrusive_ptr<c10d::Work> work;
  guarded(env, "c10d broadcast: ", [&]() {
    auto tensors = tensorsArg(env, info[1]);
    c10d::BroadcastOptions opts;
    opts.rootRank = info[2].As<Napi::Number>().Int32Value();
    if (opts.rootRank < 0 || opts.rootRank >= g.size) throw std::invalid_argument("root rank out of range");
    opts.timeout = g.timeout;
    work = g.pg->broadcast(tensors, opts);
  });
  waitFor(env, g, "broadcast", work);
  return env.Undefined();
}

// allgather(groupId, input, outputs[size]): outputs[r] receives rank r's input (same shapes).
Napi::Value Allgather(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Group& g = groupArg(env, info[0]);
  c10::intrusive_ptr<c10d::Work> work;
  guarded(env, "c10d allgather: ", [&]() {
    std::vector<at::Tensor> inputs{getTensor(env, info[1], "input")};
    std::vector<std::vector<at::Tensor>> outputs{tensorsArg(env, info[2])};
    if (static_cast<int>(outputs[0].size()) != g.size) throw std::invalid_argument("allgather needs one output per rank");
    c10d::AllgatherOptions opts;
    opts.timeout = g.timeout;
    work = g.pg->allgather(outputs, inputs, opts);
  });
  waitFor(env, g, "allgather", work);
  return env.Undefined();
}

Napi::Value Barrier(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Group& g = groupArg(env, info[0]);
  c10::intrusive_ptr<c10d::Work> work;
  guarded(env, "c10d barrier: ", [&]() {
    c10d::BarrierOptions opts;
    opts.timeout = g.timeout;
    work = g.pg->barrier(opts);
  });
  waitFor(env, g, "barrier", work);
  return env.Undefined();
}

Napi::Value DestroyProcessGroup(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Group& g = groupArg(env, info[0]);
  if (g.failed) {
    (void)g.pg.release();
  } else {
    g.pg.reset();
  }
  return env.Undefined();
}

}  // namespace

void initDistributed(Napi::Env env, Napi::Object exports) {
  exports.Set("createStore", Napi::Function::New(env, CreateStore));
  exports.Set("storeSet", Napi::Function::New(env, StoreSet));
  exports.Set("storeGet", Napi::Function::New(env, StoreGet));
  exports.Set("createProcessGroup", Napi::Function::New(env, CreateProcessGroup));
  exports.Set("allreduce", Napi::Function::New(env, Allreduce));
  exports.Set("broadcast", Napi::Function::New(env, Broadcast));
  exports.Set("allgather", Napi::Function::New(env, Allgather));
  exports.Set("barrier", Napi::Function::New(env, Barrier));
  exports.Set("destroyProcessGroup", Napi::Function::New(env, DestroyProcessGroup));
}
#else
void initDistributed(Napi::Env, Napi::Object) {}
#endif

}  // namespace tailor
