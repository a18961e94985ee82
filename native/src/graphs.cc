// CUDA graphs: libtorch's at::cuda::CUDAGraph (capture a stream's kernels once, replay them with
// one launch) and the side stream a capture runs on. The calls mirror torch.cuda.CUDAGraph and
// torch.cuda.graph: enter a side stream that waits for the current one, warm up and capture
// there (each graph with its own private memory pool), leave it so that the caller's stream waits
// for the side stream's work, then replay from any stream. Graph handles live in a table owned
// by the addon instance; JS holds their numbers and frees them with cudaGraphDispose.
//
// The graph needs the CUDA runtime headers (TAILOR_CUDA_HEADERS). Without them, or on a CPU
// libtorch, its calls throw a message naming what is missing and cudaGraphsInfo() says why, so
// the trainer can fall back to eager steps with that reason.
#include <napi.h>
#include <algorithm>
#include "state.h"

#ifdef TAILOR_CUDA_HEADERS
#include <ATen/cuda/CUDAGraph.h>
#endif
#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/cuda.h>

namespace tailor {
namespace {

#ifdef TAILOR_CUDA_HEADERS
struct GraphsState {
  std::unordered_map<uint32_t, std::unique_ptr<at::cuda::CUDAGraph>> graphs;
  uint32_t next = 1;
};

GraphsState& graphsState(Napi::Env env) {
  State& s = state(env);
  if (!s.graphs) s.graphs = std::make_shared<GraphsState>();
  return *static_cast<GraphsState*>(s.graphs.get());
}

at::cuda::CUDAGraph& graphOf(Napi::Env env, const Napi::Value& handle) {
  if (!handle.IsNumber()) throw std::invalid_argument("expected a CUDA graph handle");
  auto& table = graphsState(env).graphs;
  auto it = table.find(handle.As<Napi::Number>().Uint32Value());
  if (it == table.end()) throw std::invalid_argument("the CUDA graph was disposed");
  return *it->second;
}

#else
[[noreturn]] void unavailable() {
  throw std::runtime_error(
      "CUDA graphs are not available: the addon was built without the CUDA runtime headers "
      "(nvidia-cuda-runtime beside a CUDA PyTorch, or CUDA_HOME); rebuild with them");
}
#endif

// cudaGraphsInfo() -> {compiled, available, reason?}: whether graphs can be captured here.
Napi::Value CudaGraphsInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
#ifdef TAILOR_CUDA_HEADERS
  o.Set("compiled", true);
  bool available = torch::cuda::is_available();
  o.Set("available", available);
  if (!available) o.Set("reason", "no CUDA device is visible to this libtorch");
#else
  o.Set("compiled", false);
  o.Set("available", false);
  o.Set("reason", "the addon was built without the CUDA runtime headers");
#endif
  return o;
}

// cudaGraphNew() -> handle
Napi::Value CudaGraphNew(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "cudaGraphNew: ", [&]() -> Napi::Value {
#ifdef TAILOR_CUDA_HEADERS
    auto& gs = graphsState(env);
    uint32_t id = gs.next++;
    gs.graphs.emplace(id, std::make_unique<at::cuda::CUDAGraph>());
    return Napi::Number::New(env, id);
#else
    unavailable();
#endif
  });
}

// cudaGraphCall(handle, 'begin'|'end'|'replay'|'reset'): one step of a graph's life. 'begin'
// starts capturing the current stream (which must not be the default stream) into a private pool.
Napi::Value CudaGraphCall(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "cudaGraph: ", [&]() -> Napi::Value {
#ifdef TAILOR_CUDA_HEADERS
    auto& graph = graphOf(env, info[0]);
    std::string what = info[1].As<Napi::String>().Utf8Value();
    if (what == "begin") {
      graph.capture_begin();
    } else if (what == "end") {
      graph.capture_end();
    } else if (what == "replay") {
      graph.replay();
    } else if (what == "reset") {
      graph.reset();
    } else {
      throw std::invalid_argument("unknown graph call '" + what + "'");
    }
    return env.Undefined();
#else
    unavailable();
#endif
  });
}

// cudaGraphDispose(handle): frees the graph (its private pool returns to the caching allocator).
Napi::Value CudaGraphDispose(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "cudaGraphDispose: ", [&]() -> Napi::Value {
#ifdef TAILOR_CUDA_HEADERS
    if (info[0].IsNumber()) graphsState(env).graphs.erase(info[0].As<Napi::Number>().Uint32Value());
#endif
    return env.Undefined();
  });
}

// The CUDA streams go through c10's device-generic guard (no CUDA headers needed): a side stream
// works on any CUDA libtorch, and so do the warm-up steps that run on it.
c10::Device cudaDeviceOf(const Napi::CallbackInfo& info, size_t at) {
  if (!torch::cuda::is_available()) throw std::runtime_error("CUDA is not available in this libtorch or on this machine");
  c10::Device d(c10::DeviceType::CUDA, 0);
  if (info.Length() > at && info[at].IsString()) {
    d = c10::Device(info[at].As<Napi::String>().Utf8Value());
    if (!d.is_cuda()) throw std::invalid_argument("a side stream needs a CUDA device, got " + d.str());
    if (!d.has_index()) d = c10::Device(c10::DeviceType::CUDA, 0);
  }
  return d;
}

// The streams that were current when a side stream was entered (innermost last), per thread.
thread_local std::vector<c10::Stream> savedStreams;

// cudaSideStreamEnter(device): makes a pool stream current on the device, after it waits for the
// work queued so far on the stream that was current (torch.cuda.stream(s) after s.wait_stream).
Napi::Value CudaSideStreamEnter(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "cudaSideStreamEnter: ", [&]() -> Napi::Value {
    c10::Device device = cudaDeviceOf(info, 0);
    c10::impl::VirtualGuardImpl impl(c10::DeviceType::CUDA);
    c10::Stream current = impl.getStream(device);
    c10::Stream side = impl.getStreamFromGlobalPool(device, false);
    c10::Event ready(c10::DeviceType::CUDA);
    ready.record(current);
    ready.block(side);
    savedStreams.push_back(impl.exchangeStream(side));
    return env.Undefined();
  });
}

// cudaSideStreamExit(): restores the stream that was current at the matching enter, after it
// waits for everything queued on the side stream.
Napi::Value CudaSideStreamExit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "cudaSideStreamExit: ", [&]() -> Napi::Value {
    if (savedStreams.empty()) throw std::logic_error("no side stream was entered");
    c10::Stream previous = savedStreams.back();
    savedStreams.pop_back();
    c10::impl::VirtualGuardImpl impl(c10::DeviceType::CUDA);
    c10::Stream side = impl.getStream(previous.device());
    c10::Event done(c10::DeviceType::CUDA);
    done.record(side);
    done.block(previous);
    impl.exchangeStream(previous);
    return env.Undefined();
  });
}

// Branch streams: independent parts of a step (the experts of a multi-expert model, PRL's
// preference draws) queued on streams of their own, so that their kernels can run at the same
// time on the GPU, in a captured graph as parallel branches (torch.cuda.stream per branch, each
// waiting for the origin stream first, and the origin waiting for every branch at the end).
// Autograd runs each backward operator on its forward's stream and joins them itself. The branch streams are high-priority
// pool streams, kept per device, so that they never coincide with a side stream (low-priority
// pool) nor with each other, and the same ones serve every step (warm-up and capture alike).
struct Fork {
  c10::Stream origin;
  std::vector<c10::Stream> branches;
};
thread_local std::vector<Fork> forks;
thread_local std::unordered_map<c10::DeviceIndex, std::vector<c10::Stream>> branchPool;

std::vector<c10::Stream> branchStreams(c10::Device device, const c10::Stream& origin, size_t n) {
  c10::impl::VirtualGuardImpl impl(c10::DeviceType::CUDA);
  auto& pool = branchPool[device.index()];
  // a pool hands its streams out round-robin: keep asking until there are n distinct ones
  // besides the origin (the pool holds 32 per priority, so a few more asks always do)
  for (int asks = 0; pool.size() < n + 1 && asks < 128; asks++) {
    c10::Stream s = impl.getStreamFromGlobalPool(device, true);
    if (std::find(pool.begin(), pool.end(), s) == pool.end()) pool.push_back(s);
  }
  std::vector<c10::Stream> out;
  for (const auto& s : pool)
    if (s != origin && out.size() < n) out.push_back(s);
  // too few distinct streams: the rest of the branches run on the origin stream, in order
  while (out.size() < n) out.push_back(origin);
  return out;
}

// cudaBranchStreamsFork(device, n): n branch streams, each waiting for the work queued so far
// on the current stream (the origin). Nothing changes the current stream until a branch is used.
Napi::Value CudaBranchStreamsFork(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "cudaBranchStreamsFork: ", [&]() -> Napi::Value {
    c10::Device device = cudaDeviceOf(info, 0);
    int64_t n = info[1].As<Napi::Number>().Int64Value();
    if (n < 1 || n > 16) throw std::invalid_argument("between 1 and 16 branch streams, got " + std::to_string(n));
    c10::impl::VirtualGuardImpl impl(c10::DeviceType::CUDA);
    c10::Stream origin = impl.getStream(device);
    Fork fork{origin, branchStreams(device, origin, static_cast<size_t>(n))};
    c10::Event ready(c10::DeviceType::CUDA);
    ready.record(origin);
    for (const auto& s : fork.branches)
      if (s != origin) ready.block(s);
    forks.push_back(std::move(fork));
    return env.Undefined();
  });
}

// cudaBranchStreamUse(i): makes branch i of the innermost fork the current stream.
Napi::Value CudaBranchStreamUse(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "cudaBranchStreamUse: ", [&]() -> Napi::Value {
    if (forks.empty()) throw std::logic_error("no branch streams were forked");
    const Fork& fork = forks.back();
    int64_t i = info[0].As<Napi::Number>().Int64Value();
    if (i < 0 || i >= static_cast<int64_t>(fork.branches.size()))
      throw std::invalid_argument("branch " + std::to_string(i) + " of " + std::to_string(fork.branches.size()));
    c10::impl::VirtualGuardImpl impl(c10::DeviceType::CUDA);
    impl.exchangeStream(fork.branches[static_cast<size_t>(i)]);
    return env.Undefined();
  });
}

// cudaBranchStreamsJoin(outputs): the origin stream current again, after it waits for every
// branch; the branches' outputs (tensor handles) are marked as used on the origin stream, so the
// caching allocator does not hand their memory to a branch while the origin may still read it.
Napi::Value CudaBranchStreamsJoin(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "cudaBranchStreamsJoin: ", [&]() -> Napi::Value {
    if (forks.empty()) throw std::logic_error("no branch streams were forked");
    Fork fork = forks.back();
    forks.pop_back();
    c10::impl::VirtualGuardImpl impl(c10::DeviceType::CUDA);
    impl.exchangeStream(fork.origin);
    for (const auto& s : fork.branches) {
      if (s == fork.origin) continue;
      c10::Event done(c10::DeviceType::CUDA);
      done.record(s);
      done.block(fork.origin);
    }
    if (info.Length() > 0 && info[0].IsArray()) {
      Napi::Array outputs = info[0].As<Napi::Array>();
      for (uint32_t k = 0; k < outputs.Length(); k++) {
        const at::Tensor& t = getTensor(env, outputs.Get(k), "branch output");
        if (t.defined() && t.is_cuda()) t.record_stream(fork.origin);
      }
    }
    return env.Undefined();
  });
}

}  // namespace

void initGraphs(Napi::Env env, Napi::Object exports) {
  exports.Set("cudaGraphsInfo", Napi::Function::New(env, CudaGraphsInfo));
  exports.Set("cudaGraphNew", Napi::Function::New(env, CudaGraphNew));
  exports.Set("cudaGraphCall", Napi::Function::New(env, CudaGraphCall));
  exports.Set("cudaGraphDispose", Napi::Function::New(env, CudaGraphDispose));
  exports.Set("cudaSideStreamEnter", Napi::Function::New(env, CudaSideStreamEnter));
  exports.Set("cudaSideStreamExit", Napi::Function::New(env, CudaSideStreamExit));
  exports.Set("cudaBranchStreamsFork", Napi::Function::New(env, CudaBranchStreamsFork));
  exports.Set("cudaBranchStreamUse", Napi::Function::New(env, CudaBranchStreamUse));
  exports.Set("cudaBranchStreamsJoin", Napi::Function::New(env, CudaBranchStreamsJoin));
}

}  // namespace tailor
