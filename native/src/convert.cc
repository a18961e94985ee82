// JS value <-> IValue conversion driven by the operator schema's argument types.
#include "state.h"

#include <cmath>
#include <stdexcept>

namespace tailor {
namespace {

[[noreturn]] void mismatch(const c10::Argument& argument, const char* expected) {
  throw std::invalid_argument("argument '" + argument.name() + "' (" + argument.type()->str() +
                              ") expects " + expected);
}

int64_t toInt(const Napi::Value& v, const c10::Argument& argument) {
  if (v.IsNumber()) {
    double d = v.As<Napi::Number>().DoubleValue();
    if (std::floor(d) != d) mismatch(argument, "an integer");
    return static_cast<int64_t>(d);
  }
  if (v.IsBigInt()) {
    bool lossless = false;
    return v.As<Napi::BigInt>().Int64Value(&lossless);
  }
  if (v.IsBoolean()) return v.As<Napi::Boolean>().Value() ? 1 : 0;
  mismatch(argument, "an integer");
}

double toFloat64(const Napi::Value& v, const c10::Argument& argument) {
  if (v.IsNumber()) return v.As<Napi::Number>().DoubleValue();
  if (v.IsBigInt()) {
    bool lossless = false;
    return static_cast<double>(v.As<Napi::BigInt>().Int64Value(&lossless));
  }
  mismatch(argument, "a number");
}

}  // namespace

c10::Scalar toScalar(const Napi::Value& v, const c10::Argument& argument) {
  if (v.IsBoolean()) return c10::Scalar(v.As<Napi::Boolean>().Value());
  if (v.IsBigInt()) {
    bool lossless = false;
    return c10::Scalar(static_cast<int64_t>(v.As<Napi::BigInt>().Int64Value(&lossless)));
  }
  if (v.IsNumber()) {
    double d = v.As<Napi::Number>().DoubleValue();
    // JS cannot tell 1 from 1.0: integral values become int Scalars (type promotion then keeps
    // a float tensor float); callers that need a float Scalar pass {float: x}.
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9007199254740992.0) {
      return c10::Scalar(static_cast<int64_t>(d));
    }
    return c10::Scalar(d);
  }
  if (v.IsObject()) {
    Napi::Object o = v.As<Napi::Object>();
    if (o.Has("float")) return c10::Scalar(o.Get("float").As<Napi::Number>().DoubleValue());
  }
  mismatch(argument, "a number or boolean");
}

namespace {

std::vector<int64_t> toIntList(const Napi::Value& v, const c10::Argument& argument) {
  if (v.IsNumber() || v.IsBigInt()) {
    // int[2] accepts one number, repeated, as Python does.
    int64_t n = argument.N() ? *argument.N() : 1;
    return std::vector<int64_t>(static_cast<size_t>(n), toInt(v, argument));
  }
  if (!v.IsArray()) mismatch(argument, "an array of integers");
  Napi::Array a = v.As<Napi::Array>();
  std::vector<int64_t> out(a.Length());
  for (uint32_t i = 0; i < a.Length(); i++) out[i] = toInt(a.Get(i), argument);
  return out;
}

c10::IValue convert(Napi::Env env, const Napi::Value& value, const c10::TypePtr& type,
                    const c10::Argument& argument) {
  using c10::TypeKind;
  switch (type->kind()) {
    case TypeKind::OptionalType:
      if (value.IsNull() || value.IsUndefined()) return c10::IValue();
      return convert(env, value, type->castRaw<c10::OptionalType>()->getElementType(), argument);
    case TypeKind::TensorType:
      return getTensor(env, value, argument.name().c_str());
    case TypeKind::IntType:
    case TypeKind::SymIntType:
      return toInt(value, argument);
    case TypeKind::FloatType:
      return toFloat64(value, argument);
    case TypeKind::BoolType:
      if (value.IsBoolean()) return value.As<Napi::Boolean>().Value();
      if (value.IsNumber()) return value.As<Napi::Number>().DoubleValue() != 0;
      mismatch(argument, "a boolean");
    case TypeKind::NumberType:
      return toScalar(value, argument);
    case TypeKind::StringType:
      if (!value.IsString()) mismatch(argument, "a string");
      return value.As<Napi::String>().Utf8Value();
    case TypeKind::DeviceObjType: {
      std::string device = value.IsString() ? value.As<Napi::String>().Utf8Value() : "cpu";
      return c10::Device(device);
    }
    case TypeKind::ScalarTypeType:
    case TypeKind::LayoutType:
    case TypeKind::MemoryFormatType:
      return toInt(value, argument);
    case TypeKind::GeneratorType:
      if (value.IsNull() || value.IsUndefined()) return c10::IValue();
      mismatch(argument, "null (custom generators are not supported; seed the global one)");
    case TypeKind::ListType: {
      const auto& elem = type->castRaw<c10::ListType>()->getElementType();
      switch (elem->kind()) {
        case TypeKind::IntType:
        case TypeKind::SymIntType:
          return toIntList(value, argument);
        case TypeKind::FloatType: {
          if (!value.IsArray()) mismatch(argument, "an array of numbers");
          Napi::Array a = value.As<Napi::Array>();
          std::vector<double> out(a.Length());
          for (uint32_t i = 0; i < a.Length(); i++) out[i] = toFloat64(a.Get(i), argument);
          return out;
        }
        case TypeKind::BoolType: {
          if (!value.IsArray()) mismatch(argument, "an array of booleans");
          Napi::Array a = value.As<Napi::Array>();
          c10::List<bool> out;
          for (uint32_t i = 0; i < a.Length(); i++) out.push_back(a.Get(i).ToBoolean().Value());
          return out;
        }
        case TypeKind::TensorType: {
          if (!value.IsArray()) mismatch(argument, "an array of tensors");
          Napi::Array a = value.As<Napi::Array>();
          c10::List<at::Tensor> out;
          out.reserve(a.Length());
          for (uint32_t i = 0; i < a.Length(); i++) out.push_back(getTensor(env, a.Get(i), argument.name().c_str()));
          return out;
        }
        case TypeKind::OptionalType: {
          if (!value.IsArray()) mismatch(argument, "an array of tensors or nulls");
          Napi::Array a = value.As<Napi::Array>();
          c10::List<c10::optional<at::Tensor>> out;
          for (uint32_t i = 0; i < a.Length(); i++) {
            Napi::Value item = a.Get(i);
            if (item.IsNull() || item.IsUndefined()) {
              out.push_back(c10::nullopt);
            } else {
              out.push_back(getTensor(env, item, argument.name().c_str()));
            }
          }
          return out;
        }
        default:
          break;
      }
      break;
    }
    default:
      break;
  }
  throw std::invalid_argument("argument '" + argument.name() + "' has a type the binding does not convert: " +
                              type->str());
}

}  // namespace

c10::IValue toIValue(Napi::Env env, const Napi::Value& value, const c10::Argument& argument) {
  if (value.IsUndefined()) {
    if (argument.default_value()) return *argument.default_value();
    if (argument.type()->kind() == c10::TypeKind::OptionalType) return c10::IValue();
    throw std::invalid_argument("missing required argument '" + argument.name() + "'");
  }
  // ScalarType, Layout and MemoryFormat appear as int in type(); real_type() names them.
  return convert(env, value, argument.real_type(), argument);
}

Napi::Value fromIValue(Napi::Env env, const c10::IValue& value) {
  if (value.isTensor()) {
    const at::Tensor& t = value.toTensor();
    if (!t.defined()) return env.Null();
    return Napi::Number::New(env, putTensor(env, t));
  }
  if (value.isNone()) return env.Null();
  if (value.isInt()) return Napi::Number::New(env, static_cast<double>(value.toInt()));
  if (value.isDouble()) return Napi::Number::New(env, value.toDouble());
  if (value.isBool()) return Napi::Boolean::New(env, value.toBool());
  if (value.isString()) return Napi::String::New(env, value.toStringRef());
  if (value.isTensorList()) {
    auto list = value.toTensorList();
    Napi::Array out = Napi::Array::New(env, list.size());
    for (uint32_t i = 0; i < list.size(); i++) {
      at::Tensor t = list.get(i);
      out.Set(i, t.defined() ? Napi::Value(Napi::Number::New(env, putTensor(env, t))) : env.Null());
    }
    return out;
  }
  if (value.isTuple()) {
    const auto& elements = value.toTupleRef().elements();
    Napi::Array out = Napi::Array::New(env, elements.size());
    for (uint32_t i = 0; i < elements.size(); i++) out.Set(i, fromIValue(env, elements[i]));
    return out;
  }
  if (value.isList()) {
    auto list = value.toListRef();
    Napi::Array out = Napi::Array::New(env, list.size());
    for (uint32_t i = 0; i < list.size(); i++) out.Set(i, fromIValue(env, list[i]));
    return out;
  }
  if (value.isScalar()) {
    return Napi::Number::New(env, value.toScalar().toDouble());
  }
  if (value.isDevice()) return Napi::String::New(env, value.toDevice().str());
  throw std::invalid_argument(std::string("cannot convert a returned value of kind ") + value.tagKind());
}

}  // namespace tailor
