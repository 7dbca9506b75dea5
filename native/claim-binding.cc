// JavaScript binding of the claim store (claim-store.h holds the format and the rules).
// src/native/ validates every argument; this side only checks types and reports through a
// Float64Array handed over once, so a claim allocates nothing.
#include "claim-binding.h"

#include <string>

#include "claim-store.h"
#include "napi-utf16.h"

namespace {

class ClaimStore : public Napi::ObjectWrap<ClaimStore> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ClaimStore",
                       {
                           InstanceMethod<&ClaimStore::Claim>("claim"),
                           InstanceMethod<&ClaimStore::Sweep>("sweep"),
                           InstanceMethod<&ClaimStore::Stats>("stats"),
                           InstanceMethod<&ClaimStore::Survey>("survey"),
                           InstanceMethod<&ClaimStore::SetClock>("setClock"),
                           InstanceMethod<&ClaimStore::Close>("close"),
                       });
  }

  // new ClaimStore(dir: string, maxBytes: number, minSlots: number, out: Float64Array(5))
  explicit ClaimStore(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ClaimStore>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 4 || !info[0].IsString() || !info[1].IsNumber() || !info[2].IsNumber() ||
        !info[3].IsTypedArray() || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array ||
        info[3].As<Napi::Float64Array>().ElementLength() < 5) {
      Napi::TypeError::New(env, "ClaimStore(dir, maxBytes, minSlots, Float64Array(5))").ThrowAsJavaScriptException();
      return;
    }
    const std::string err = store_.Open(info[0].As<Napi::String>().Utf8Value(), U64(info[1]), U64(info[2]));
    if (!err.empty()) {
      Napi::Error::New(env, err).ThrowAsJavaScriptException();
      return;
    }
    Napi::Float64Array out = info[3].As<Napi::Float64Array>();
    out_ = out.Data();
    outRef_ = Napi::Persistent(out);
  }

 private:
  static uint64_t U64(const Napi::Value& v) { return static_cast<uint64_t>(v.As<Napi::Number>().Int64Value()); }

  bool Open(Napi::Env env) {
    if (store_.IsOpen()) return true;
    Napi::Error::New(env, "the claim store is closed").ThrowAsJavaScriptException();
    return false;
  }

  // claim(id, untilMs) -> 1 claimed, 0 already claimed, -1 full, -3 until has passed
  Napi::Value Claim(const Napi::CallbackInfo& info) {
    if (!Open(info.Env())) return info.Env().Undefined();
    palisade::Utf16 id;
    if (!id.Read(info.Env(), info[0])) return info.Env().Undefined();
    return Napi::Number::New(info.Env(), store_.Claim(id.data(), id.bytes(), U64(info[1])));
  }

  // sweep(removeFiles) -> files removed
  Napi::Value Sweep(const Napi::CallbackInfo& info) {
    if (!Open(info.Env())) return info.Env().Undefined();
    return Napi::Number::New(info.Env(), static_cast<double>(store_.Sweep(info[0].ToBoolean().Value())));
  }

  // stats() -> 0 (out: bytes, segments, claims, buckets, full)
  Napi::Value Stats(const Napi::CallbackInfo& info) {
    if (!Open(info.Env())) return info.Env().Undefined();
    const claims::Stats s = store_.GetStats();
    out_[0] = static_cast<double>(s.bytes);
    out_[1] = static_cast<double>(s.segments);
    out_[2] = static_cast<double>(s.claims);
    out_[3] = static_cast<double>(s.buckets);
    out_[4] = static_cast<double>(s.full);
    return Napi::Number::New(info.Env(), 0);
  }

  // survey() -> 0 (out: claims, segments, buckets, bytes of every live segment in the directory)
  Napi::Value Survey(const Napi::CallbackInfo& info) {
    if (!Open(info.Env())) return info.Env().Undefined();
    uint64_t claims, segments, buckets, bytes;
    store_.Survey(&claims, &segments, &buckets, &bytes);
    out_[0] = static_cast<double>(claims);
    out_[1] = static_cast<double>(segments);
    out_[2] = static_cast<double>(buckets);
    out_[3] = static_cast<double>(bytes);
    return Napi::Number::New(info.Env(), 0);
  }

  // setClock(epochMs) -> undefined; 0 returns to the real clock
  Napi::Value SetClock(const Napi::CallbackInfo& info) {
    store_.SetClock(U64(info[0]));
    return info.Env().Undefined();
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    store_.Close();
    outRef_.Reset();
    out_ = nullptr;
    return info.Env().Undefined();
  }

  claims::Store store_;
  double* out_ = nullptr;
  Napi::Reference<Napi::Float64Array> outRef_;
};

}  // namespace

void InitClaimStore(Napi::Env env, Napi::Object exports) { exports.Set("ClaimStore", ClaimStore::Define(env)); }
