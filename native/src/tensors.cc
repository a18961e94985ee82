// Tensor handles: creation from typed arrays, read-back, metadata and disposal.
#include "state.h"

#include <cstring>

namespace tailor {

uint32_t putTensor(Napi::Env env, at::Tensor tensor) {
  State& s = state(env);
  s.live++;
  if (!s.freeSlots.empty()) {
    uint32_t slot = s.freeSlots.back();
    s.freeSlots.pop_back();
    s.tensors[slot] = std::move(tensor);
    return slot;
  }
  s.tensors.push_back(std::move(tensor));
  return static_cast<uint32_t>(s.tensors.size() - 1);
}

const at::Tensor& getTensor(Napi::Env env, const Napi::Value& handle, const char* what) {
  State& s = state(env);
  if (!handle.IsNumber()) {
    if (handle.IsUndefined()) throw std::invalid_argument(std::string("missing required argument '") + what + "'");
    throw std::invalid_argument(std::string("argument '") + what + "' expects a tensor");
  }
  int64_t slot = handle.As<Napi::Number>().Int64Value();
  if (slot < 0 || static_cast<size_t>(slot) >= s.tensors.size() || !s.tensors[slot].defined()) {
    throw std::invalid_argument(std::string("argument '") + what +
                                "' is a tensor that was already disposed (use it inside its scope, or keep() it)");
  }
  return s.tensors[slot];
}

void releaseTensor(Napi::Env env, const Napi::Value& handle) {
  State& s = state(env);
  int64_t slot = handle.As<Napi::Number>().Int64Value();
  if (slot < 0 || static_cast<size_t>(slot) >= s.tensors.size() || !s.tensors[slot].defined()) return;
  s.tensors[slot] = at::Tensor();
  s.freeSlots.push_back(static_cast<uint32_t>(slot));
  s.live--;
}

namespace {

std::vector<int64_t> shapeOf(const Napi::Value& v) {
  if (!v.IsArray()) throw std::invalid_argument("shape must be an array of non-negative integers");
  Napi::Array a = v.As<Napi::Array>();
  std::vector<int64_t> shape(a.Length());
  for (uint32_t i = 0; i < a.Length(); i++) {
    double d = a.Get(i).As<Napi::Number>().DoubleValue();
    if (d < 0 || d != static_cast<double>(static_cast<int64_t>(d))) {
      throw std::invalid_argument("shape must be an array of non-negative integers");
    }
    shape[i] = static_cast<int64_t>(d);
  }
  return shape;
}

// fromArray(typedArray, shape, dtype?, pinned?) copies the data into a new CPU tensor, in
// page-locked memory when pinned (data bound for a GPU: one copy instead of a copy, then a second
// into pinned memory).
Napi::Value FromArray(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "fromArray: ", [&]() -> Napi::Value {
    if (!info[0].IsTypedArray()) throw std::invalid_argument("data must be a typed array");
    Napi::TypedArray array = info[0].As<Napi::TypedArray>();
    std::vector<int64_t> shape = shapeOf(info[1]);
    at::ScalarType type;
    switch (array.TypedArrayType()) {
      case napi_float32_array: type = at::kFloat; break;
      case napi_float64_array: type = at::kDouble; break;
      case napi_int32_array: type = at::kInt; break;
      case napi_bigint64_array: type = at::kLong; break;
      case napi_uint8_array: type = at::kByte; break;
      case napi_int8_array: type = at::kChar; break;
      case napi_int16_array: type = at::kShort; break;
      default: throw std::invalid_argument("unsupported typed array type");
    }
    if (info.Length() > 2 && info[2].IsNumber()) {
      auto requested = static_cast<at::ScalarType>(info[2].As<Napi::Number>().Int32Value());
      if (requested == at::kBool && type == at::kByte) type = at::kBool;
    }
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    if (static_cast<size_t>(numel) != array.ElementLength()) {
      throw std::invalid_argument("shape holds " + std::to_string(numel) + " elements but the data has " +
                                  std::to_string(array.ElementLength()));
    }
    const bool pinned = info.Length() > 3 && info[3].ToBoolean().Value();
    at::Tensor t = at::empty(shape, at::TensorOptions().dtype(type).pinned_memory(pinned));
    auto* source = static_cast<uint8_t*>(array.ArrayBuffer().Data()) + array.ByteOffset();
    std::memcpy(t.data_ptr(), source, array.ByteLength());
    return Napi::Number::New(env, putTensor(env, std::move(t)));
  });
}

template <typename ArrayT, typename T>
Napi::Value copyOut(Napi::Env env, const at::Tensor& t) {
  auto out = ArrayT::New(env, t.numel());
  std::memcpy(out.Data(), t.data_ptr<T>(), t.numel() * sizeof(T));
  return out;
}

// toArray(handle) copies the tensor into a typed array of its dtype (bool -> Uint8Array,
// half/bfloat16 -> Float32Array).
Napi::Value ToArray(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "toArray: ", [&]() -> Napi::Value {
    at::Tensor t = getTensor(env, info[0]).detach();
    // Some backward formulas (sgn's, for one) give an efficient zero tensor, which has no storage
    // to copy: read it as the zeros it stands for.
    if (t._is_zerotensor()) t = at::zeros(t.sizes(), t.options());
    t = t.cpu().contiguous();
    switch (t.scalar_type()) {
      case at::kFloat: return copyOut<Napi::Float32Array, float>(env, t);
      case at::kDouble: return copyOut<Napi::Float64Array, double>(env, t);
      case at::kInt: return copyOut<Napi::Int32Array, int32_t>(env, t);
      case at::kLong: return copyOut<Napi::BigInt64Array, int64_t>(env, t);
      case at::kByte: return copyOut<Napi::Uint8Array, uint8_t>(env, t);
      case at::kChar: return copyOut<Napi::Int8Array, int8_t>(env, t);
      case at::kShort: return copyOut<Napi::Int16Array, int16_t>(env, t);
      case at::kBool: return copyOut<Napi::Uint8Array, uint8_t>(env, t.to(at::kByte));
      case at::kHalf:
      case at::kBFloat16: return copyOut<Napi::Float32Array, float>(env, t.to(at::kFloat));
      default: throw std::invalid_argument(std::string("cannot read back dtype ") + c10::toString(t.scalar_type()));
    }
  });
}

Napi::Value Item(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "item: ", [&]() -> Napi::Value {
    const at::Tensor& t = getTensor(env, info[0]);
    if (t.numel() != 1) {
      throw std::invalid_argument("item() needs a tensor with one element, this one has " + std::to_string(t.numel()));
    }
    c10::Scalar s = t.item();
    if (s.isBoolean()) return Napi::Boolean::New(env, s.toBool());
    return Napi::Number::New(env, s.toDouble());
  });
}

Napi::Value Shape(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "shape: ", [&]() -> Napi::Value {
    const at::Tensor& t = getTensor(env, info[0]);
    auto sizes = t.sizes();
    Napi::Array out = Napi::Array::New(env, sizes.size());
    for (uint32_t i = 0; i < sizes.size(); i++) out.Set(i, Napi::Number::New(env, static_cast<double>(sizes[i])));
    return out;
  });
}

Napi::Value Strides(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "strides: ", [&]() -> Napi::Value {
    const at::Tensor& t = getTensor(env, info[0]);
    auto strides = t.strides();
    Napi::Array out = Napi::Array::New(env, strides.size());
    for (uint32_t i = 0; i < strides.size(); i++) out.Set(i, Napi::Number::New(env, static_cast<double>(strides[i])));
    return out;
  });
}

Napi::Value Dtype(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "dtype: ", [&]() -> Napi::Value {
    return Napi::Number::New(env, static_cast<int>(getTensor(env, info[0]).scalar_type()));
  });
}

Napi::Value Dim(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "dim: ", [&]() -> Napi::Value {
    return Napi::Number::New(env, static_cast<double>(getTensor(env, info[0]).dim()));
  });
}

Napi::Value Numel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "numel: ", [&]() -> Napi::Value {
    return Napi::Number::New(env, static_cast<double>(getTensor(env, info[0]).numel()));
  });
}

Napi::Value IsContiguous(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "isContiguous: ", [&]() -> Napi::Value {
    return Napi::Boolean::New(env, getTensor(env, info[0]).is_contiguous());
  });
}

// isSparse(handle): whether the tensor has a sparse COO layout (dense ones are strided).
Napi::Value IsSparse(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "isSparse: ", [&]() -> Napi::Value {
    return Napi::Boolean::New(env, getTensor(env, info[0]).layout() == at::kSparse);
  });
}

Napi::Value Dispose(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info[0].IsNumber()) {
    releaseTensor(env, info[0]);
  } else if (info[0].IsArray()) {
    Napi::Array a = info[0].As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++) releaseTensor(env, a.Get(i));
  }
  return env.Undefined();
}

Napi::Value IsAlive(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  State& s = state(env);
  int64_t slot = info[0].As<Napi::Number>().Int64Value();
  bool alive = slot >= 0 && static_cast<size_t>(slot) < s.tensors.size() && s.tensors[slot].defined();
  return Napi::Boolean::New(env, alive);
}

Napi::Value LiveTensors(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(state(info.Env()).live));
}

// A second handle to the same tensor object (shares storage and autograd identity).
Napi::Value Share(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "share: ", [&]() -> Napi::Value {
    return Napi::Number::New(env, putTensor(env, getTensor(env, info[0])));
  });
}

// Replaces the data of dst by src's (like `param.data = src` in PyTorch), keeping dst's handle.
Napi::Value SetData(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, "setData: ", [&]() -> Napi::Value {
    at::Tensor dst = getTensor(env, info[0], "dst");
    dst.set_data(getTensor(env, info[1], "src"));
    return env.Undefined();
  });
}

}  // namespace

void initTensors(Napi::Env env, Napi::Object exports) {
  exports.Set("fromArray", Napi::Function::New(env, FromArray));
  exports.Set("toArray", Napi::Function::New(env, ToArray));
  exports.Set("item", Napi::Function::New(env, Item));
  exports.Set("shape", Napi::Function::New(env, Shape));
  exports.Set("strides", Napi::Function::New(env, Strides));
  exports.Set("dtype", Napi::Function::New(env, Dtype));
  exports.Set("dim", Napi::Function::New(env, Dim));
  exports.Set("numel", Napi::Function::New(env, Numel));
  exports.Set("isContiguous", Napi::Function::New(env, IsContiguous));
  exports.Set("isSparse", Napi::Function::New(env, IsSparse));
  exports.Set("dispose", Napi::Function::New(env, Dispose));
  exports.Set("isAlive", Napi::Function::New(env, IsAlive));
  exports.Set("liveTensors", Napi::Function::New(env, LiveTensors));
  exports.Set("share", Napi::Function::New(env, Share));
  exports.Set("setData", Napi::Function::New(env, SetData));
}

}  // namespace tailor
