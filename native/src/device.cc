// Devices: what the linked libtorch was built with (ABI, CUDA, cuDNN, distributed backends),
// CUDA seeds and generator states, synchronisation, the cached-memory release, autocast, and a
// tensor's device. Everything CUDA is asked through libtorch's runtime hooks, so the same source
// builds against a CPU libtorch (where CUDA simply reports unavailable).
#include "state.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <dlfcn.h>
#include <cstring>

#ifdef TAILOR_CUDA_HEADERS
#include <c10/cuda/CUDACachingAllocator.h>
#endif

// The headers compiled against must be the selected libtorch's (resolve-libtorch.mjs passes the
// version it resolved): a mismatch means another libtorch's headers leaked into the include path.
#if defined(TAILOR_EXPECT_TORCH_MAJOR) && \
    (TORCH_VERSION_MAJOR != TAILOR_EXPECT_TORCH_MAJOR || TORCH_VERSION_MINOR != TAILOR_EXPECT_TORCH_MINOR)
#error "torch/version.h is not the selected libtorch's: check TAILOR_LIBTORCH and the include path"
#endif

#define TAILOR_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace tailor {
namespace {

bool cudaAvailable() { return torch::cuda::is_available(); }

int64_t cudaDeviceCount() { return cudaAvailable() ? static_cast<int64_t>(torch::cuda::device_count()) : 0; }

// Device names from the CUDA driver (libcuda, loaded by any CUDA libtorch): the runtime API's
// property struct changes layout between CUDA versions, cuDeviceGetName does not.
std::vector<std::string> cudaDeviceNames(int64_t count) {
  std::vector<std::string> names;
  if (count == 0) return names;
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libcuda.so.1", RTLD_LAZY);
  using InitFn = int (*)(unsigned);
  using GetFn = int (*)(int*, int);
  using NameFn = int (*)(char*, int, int);
  auto init = lib ? reinterpret_cast<InitFn>(dlsym(lib, "cuInit")) : nullptr;
  auto get = lib ? reinterpret_cast<GetFn>(dlsym(lib, "cuDeviceGet")) : nullptr;
  auto name = lib ? reinterpret_cast<NameFn>(dlsym(lib, "cuDeviceGetName")) : nullptr;
  for (int64_t i = 0; i < count; i++) {
    char buf[256] = {0};
    int dev = 0;
    if (init && get && name && init(0) == 0 && get(&dev, static_cast<int>(i)) == 0 &&
        name(buf, sizeof buf, dev) == 0) {
      names.emplace_back(buf);
    } else {
      names.emplace_back("cuda:" + std::to_string(i));
    }
  }
  return names;
}

c10::Device parseDevice(const Napi::Value& v) {
  if (!v.IsString()) throw std::invalid_argument("device must be a string such as 'cpu', 'cuda' or 'cuda:1'");
  return c10::Device(v.As<Napi::String>().Utf8Value());
}

void requireCudaDevice(const c10::Device& d) {
  if (!d.is_cuda()) throw std::invalid_argument("expected a CUDA device, got " + d.str());
  if (!cudaAvailable()) throw std::invalid_argument("CUDA is not available in this libtorch or on this machine");
  int64_t index = d.has_index() ? d.index() : 0;
  if (index >= cudaDeviceCount()) {
    throw std::invalid_argument(d.str() + " does not exist (" + std::to_string(cudaDeviceCount()) +
                                " CUDA devices visible)");
  }
}

// buildInfo() -> what this addon was compiled and linked against.
Napi::Value BuildInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("torchVersion", TORCH_VERSION);
  o.Set("cxx11Abi", Napi::Boolean::New(env, _GLIBCXX_USE_CXX11_ABI == 1));
#ifdef TAILOR_GLOO
  o.Set("gloo", true);
#else
  o.Set("gloo", false);
#endif
#ifdef TAILOR_NCCL
  o.Set("nccl", true);
#else
  o.Set("nccl", false);
#endif
#ifdef TAILOR_CUDA_HEADERS
  o.Set("cudaHeaders", true);
#else
  o.Set("cudaHeaders", false);
#endif
  return o;
}

// cudaInfo() -> {available, compiled, version, devices[], cudnn}
Napi::Value CudaInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "cudaInfo: ", [&]() -> Napi::Value {
    const auto& hooks = at::detail::getCUDAHooks();
    Napi::Object o = Napi::Object::New(env);
    bool compiled = hooks.hasCUDART() || at::hasCUDA();
    o.Set("compiled", compiled);
    bool available = cudaAvailable();
    o.Set("available", available);
    if (compiled) {
      long v = hooks.versionCUDART();
      o.Set("version", std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10));
    } else {
      o.Set("version", env.Null());
    }
    auto names = cudaDeviceNames(cudaDeviceCount());
    Napi::Array devices = Napi::Array::New(env, names.size());
    for (uint32_t i = 0; i < names.size(); i++) devices.Set(i, names[i]);
    o.Set("devices", devices);
    if (compiled && hooks.compiledWithCuDNN()) {
      o.Set("cudnn", Napi::Number::New(env, static_cast<double>(available ? hooks.versionCuDNN() : 0)));
    } else {
      o.Set("cudnn", env.Null());
    }
    return o;
  });
}

// manualSeedAll(seed): the CPU generator and every visible CUDA device's (torch.manual_seed).
Napi::Value ManualSeedAll(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "manualSeed: ", [&]() -> Napi::Value {
    auto seed = static_cast<uint64_t>(info[0].As<Napi::Number>().DoubleValue());
    {
      auto gen = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_current_seed(seed);
    }
    for (int64_t i = 0; i < cudaDeviceCount(); i++) {
      auto gen = at::globalContext().defaultGenerator(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(i)));
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_current_seed(seed);
    }
    return env.Undefined();
  });
}

// getDeviceRngState(device) / setDeviceRngState(device, bytes): a CUDA device's generator state.
Napi::Value GetDeviceRngState(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "getDeviceRngState: ", [&]() -> Napi::Value {
    c10::Device d = parseDevice(info[0]);
    requireCudaDevice(d);
    auto gen = at::globalContext().defaultGenerator(c10::Device(c10::kCUDA, d.has_index() ? d.index() : 0));
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

Napi::Value SetDeviceRngState(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "setDeviceRngState: ", [&]() -> Napi::Value {
    c10::Device d = parseDevice(info[0]);
    requireCudaDevice(d);
    Napi::Uint8Array bytes = info[1].As<Napi::Uint8Array>();
    at::Tensor st = at::empty({static_cast<int64_t>(bytes.ElementLength())}, at::kByte);
    std::memcpy(st.data_ptr<uint8_t>(), bytes.Data(), bytes.ElementLength());
    auto gen = at::globalContext().defaultGenerator(c10::Device(c10::kCUDA, d.has_index() ? d.index() : 0));
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(st);
    return env.Undefined();
  });
}

// synchronize(device?): waits for the device's queued kernels (a no-op without CUDA).
Napi::Value Synchronize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "synchronize: ", [&]() -> Napi::Value {
    if (!cudaAvailable()) return env.Undefined();
    int64_t index = -1;
    if (info.Length() > 0 && info[0].IsString()) {
      c10::Device d = parseDevice(info[0]);
      if (!d.is_cuda()) return env.Undefined();
      requireCudaDevice(d);
      index = d.has_index() ? d.index() : -1;
    }
    torch::cuda::synchronize(index);
    return env.Undefined();
  });
}

// emptyCache(): returns the CUDA caching allocator's unused blocks to the driver.
Napi::Value EmptyCache(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "emptyCache: ", [&]() -> Napi::Value {
    if (!cudaAvailable()) return Napi::Boolean::New(env, false);
#ifdef TAILOR_CUDA_HEADERS
    c10::cuda::CUDACachingAllocator::emptyCache();
    return Napi::Boolean::New(env, true);
#else
    throw std::runtime_error("the addon was built without the CUDA runtime headers (nvidia-cuda-runtime), so it cannot "
                             "release cached GPU memory; rebuild with them beside the PyTorch install");
#endif
  });
}

// setAutocast(deviceType 'cpu'|'cuda', enabled, dtypeCode, nesting +1|-1) -> the previous {enabled, dtype}.
// The caller restores the previous state (autocast is thread-local, like grad mode).
Napi::Value SetAutocast(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "setAutocast: ", [&]() -> Napi::Value {
    std::string type = info[0].As<Napi::String>().Utf8Value();
    bool enabled = info[1].ToBoolean().Value();
    auto dtype = static_cast<at::ScalarType>(info[2].As<Napi::Number>().Int32Value());
    bool cuda = type == "cuda";
    if (!cuda && type != "cpu") throw std::invalid_argument("autocast supports 'cpu' and 'cuda', not '" + type + "'");
    Napi::Object previous = Napi::Object::New(env);
#if TAILOR_TORCH_AT_LEAST(2, 4)
    c10::DeviceType dt = cuda ? c10::DeviceType::CUDA : c10::DeviceType::CPU;
    previous.Set("enabled", at::autocast::is_autocast_enabled(dt));
    previous.Set("dtype", static_cast<int>(at::autocast::get_autocast_dtype(dt)));
    at::autocast::set_autocast_enabled(dt, enabled);
    at::autocast::set_autocast_dtype(dt, dtype);
#else
    previous.Set("enabled", cuda ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled());
    previous.Set("dtype",
                 static_cast<int>(cuda ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype()));
    if (cuda) {
      at::autocast::set_enabled(enabled);
      at::autocast::set_autocast_gpu_dtype(dtype);
    } else {
      at::autocast::set_cpu_enabled(enabled);
      at::autocast::set_autocast_cpu_dtype(dtype);
    }
#endif
    // Leaving the outermost region drops the casts cached for it (as torch.autocast's __exit__).
    int nesting = info[3].IsNumber() ? info[3].As<Napi::Number>().Int32Value() : 0;
    if (nesting > 0) {
      at::autocast::increment_nesting();
    } else if (nesting < 0 && at::autocast::decrement_nesting() == 0) {
      at::autocast::clear_cache();
    }
    return previous;
  });
}

// cudnnFlags({benchmark?, deterministic?}) -> the flags before: cuDNN's autotuner
// (torch.backends.cudnn.benchmark) and its deterministic algorithms. Process-wide, as in PyTorch.
Napi::Value CudnnFlags(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "cudnnFlags: ", [&]() -> Napi::Value {
    auto& ctx = at::globalContext();
    Napi::Object previous = Napi::Object::New(env);
    previous.Set("benchmark", ctx.benchmarkCuDNN());
    previous.Set("deterministic", ctx.deterministicCuDNN());
    if (info.Length() > 0 && info[0].IsObject()) {
      Napi::Object set = info[0].As<Napi::Object>();
      if (set.Has("benchmark")) ctx.setBenchmarkCuDNN(set.Get("benchmark").ToBoolean().Value());
      if (set.Has("deterministic")) ctx.setDeterministicCuDNN(set.Get("deterministic").ToBoolean().Value());
    }
    return previous;
  });
}

Napi::Value DeviceOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "device: ", [&]() -> Napi::Value {
    return Napi::String::New(env, getTensor(env, info[0]).device().str());
  });
}

Napi::Value IsPinned(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "isPinned: ", [&]() -> Napi::Value {
    const at::Tensor& t = getTensor(env, info[0]);
    return Napi::Boolean::New(env, t.is_cpu() && cudaAvailable() && t.is_pinned());
  });
}

}  // namespace

void initDevice(Napi::Env env, Napi::Object exports) {
  exports.Set("buildInfo", Napi::Function::New(env, BuildInfo));
  exports.Set("cudaInfo", Napi::Function::New(env, CudaInfo));
  exports.Set("manualSeedAll", Napi::Function::New(env, ManualSeedAll));
  exports.Set("getDeviceRngState", Napi::Function::New(env, GetDeviceRngState));
  exports.Set("setDeviceRngState", Napi::Function::New(env, SetDeviceRngState));
  exports.Set("synchronize", Napi::Function::New(env, Synchronize));
  exports.Set("emptyCache", Napi::Function::New(env, EmptyCache));
  exports.Set("setAutocast", Napi::Function::New(env, SetAutocast));
  exports.Set("deviceOf", Napi::Function::New(env, DeviceOf));
  exports.Set("cudnnFlags", Napi::Function::New(env, CudnnFlags));
  exports.Set("isPinned", Napi::Function::New(env, IsPinned));
}

}  // namespace tailor
