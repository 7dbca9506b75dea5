// JavaScript binding of the shared-memory table (shm-table.h holds the format and the rules).
// src/native/ validates every argument; this side only checks types, hashes the id's UTF-16 code
// units (exact for any string, lone surrogates included) and reports through a Float64Array the
// caller hands over once, so a call allocates nothing.
#include "shm-store.h"

#include <string>

#include "napi-utf16.h"
#include "shm-table.h"

namespace {

class ShmTable : public Napi::ObjectWrap<ShmTable> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ShmTable",
                       {
                           InstanceMethod<&ShmTable::Claim>("claim"),
                           InstanceMethod<&ShmTable::Hit>("hit"),
                           InstanceMethod<&ShmTable::Peek>("peek"),
                           InstanceMethod<&ShmTable::AddPenalty>("addPenalty"),
                           InstanceMethod<&ShmTable::Penalty>("penalty"),
                           InstanceMethod<&ShmTable::Count>("count"),
                           InstanceMethod<&ShmTable::Occupancy>("occupancy"),
                           InstanceMethod<&ShmTable::Evictions>("evictions"),
                           InstanceMethod<&ShmTable::SetClock>("setClock"),
                           InstanceMethod<&ShmTable::Info>("info"),
                           InstanceMethod<&ShmTable::Close>("close"),
                       });
  }

  // new ShmTable(path: string, capacity: number, out: Float64Array(4))
  explicit ShmTable(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ShmTable>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 3 || !info[0].IsString() || !info[1].IsNumber() || !info[2].IsTypedArray() ||
        info[2].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array ||
        info[2].As<Napi::Float64Array>().ElementLength() < 4) {
      Napi::TypeError::New(env, "ShmTable(path, capacity, Float64Array(4))").ThrowAsJavaScriptException();
      return;
    }
    const std::string err = table_.Open(info[0].As<Napi::String>().Utf8Value(),
                                        static_cast<uint64_t>(info[1].As<Napi::Number>().Int64Value()));
    if (!err.empty()) {
      Napi::Error::New(env, err).ThrowAsJavaScriptException();
      return;
    }
    Napi::Float64Array out = info[2].As<Napi::Float64Array>();
    out_ = out.Data();
    outRef_ = Napi::Persistent(out);
  }

 private:
  // Hashes the string argument `value` into a table key; false (with a JS exception) if unusable.
  bool KeyOf(Napi::Env env, napi_value value, shm::Kind kind, uint64_t tweak, shm::Key* key) {
    if (!table_.IsOpen()) {
      Napi::Error::New(env, "the state table is closed").ThrowAsJavaScriptException();
      return false;
    }
    palisade::Utf16 id;
    if (!id.Read(env, value)) return false;
    *key = table_.MakeKey(kind, tweak, id.data(), id.bytes());
    return true;
  }

  static uint64_t U64(const Napi::Value& v) { return static_cast<uint64_t>(v.As<Napi::Number>().Int64Value()); }

  void Report(const shm::WindowState& s) {
    out_[0] = s.allowed ? 1 : 0;
    out_[1] = static_cast<double>(s.count);
    out_[2] = static_cast<double>(s.resetMs);
    out_[3] = static_cast<double>(s.blockedUntil);
  }

  // claim(id, ttlMs) -> 1 first seen now, 0 seen before, -1 full, -2 busy (soft: may be evicted)
  Napi::Value Claim(const Napi::CallbackInfo& info) {
    shm::Key key;
    if (!KeyOf(info.Env(), info[0], shm::kSeenKind, 0, &key)) return info.Env().Undefined();
    return Napi::Number::New(info.Env(), table_.Claim(key, U64(info[1])));
  }

  // hit(key, limit, windowMs, holdMs) -> 0 (out: allowed, count, resetMs, blockedUntil), -1, -2
  Napi::Value Hit(const Napi::CallbackInfo& info) {
    const uint64_t windowMs = U64(info[2]);
    shm::Key key;
    if (!KeyOf(info.Env(), info[0], shm::kWindowKind, windowMs, &key)) return info.Env().Undefined();
    shm::WindowState s;
    const int r = table_.Hit(key, U64(info[1]), windowMs, U64(info[3]), &s);
    if (r == 0) Report(s);
    return Napi::Number::New(info.Env(), r);
  }

  // peek(key, limit, windowMs) -> 0 (out as hit)
  Napi::Value Peek(const Napi::CallbackInfo& info) {
    const uint64_t windowMs = U64(info[2]);
    shm::Key key;
    if (!KeyOf(info.Env(), info[0], shm::kWindowKind, windowMs, &key)) return info.Env().Undefined();
    shm::WindowState s;
    table_.Peek(key, U64(info[1]), windowMs, &s);
    Report(s);
    return Napi::Number::New(info.Env(), 0);
  }

  // addPenalty(key, n, ttlMs) -> new score, -1 full, -2 busy
  Napi::Value AddPenalty(const Napi::CallbackInfo& info) {
    shm::Key key;
    if (!KeyOf(info.Env(), info[0], shm::kPenaltyKind, 0, &key)) return info.Env().Undefined();
    return Napi::Number::New(info.Env(), static_cast<double>(table_.AddPenalty(key, U64(info[1]), U64(info[2]))));
  }

  Napi::Value Penalty(const Napi::CallbackInfo& info) {
    shm::Key key;
    if (!KeyOf(info.Env(), info[0], shm::kPenaltyKind, 0, &key)) return info.Env().Undefined();
    return Napi::Number::New(info.Env(), static_cast<double>(table_.Penalty(key)));
  }

  // count(key, limit, seed, ttlMs) -> 0 (out: allowed, count), -1 full, -2 busy, -3 missing (seed < 0)
  Napi::Value Count(const Napi::CallbackInfo& info) {
    shm::Key key;
    if (!KeyOf(info.Env(), info[0], shm::kCounterKind, 0, &key)) return info.Env().Undefined();
    shm::CountState s;
    const int r = table_.Count(key, U64(info[1]), info[2].As<Napi::Number>().Int64Value(), U64(info[3]), &s);
    if (r == 0) {
      out_[0] = s.allowed ? 1 : 0;
      out_[1] = static_cast<double>(s.count);
    }
    return Napi::Number::New(info.Env(), r);
  }

  // occupancy(start, count) -> 0 (out: live, expired, empty of `count` slots from `start`)
  Napi::Value Occupancy(const Napi::CallbackInfo& info) {
    if (!table_.IsOpen()) {
      Napi::Error::New(info.Env(), "the state table is closed").ThrowAsJavaScriptException();
      return info.Env().Undefined();
    }
    uint64_t live, expired, empty;
    table_.Occupancy(U64(info[0]), U64(info[1]), &live, &expired, &empty);
    out_[0] = static_cast<double>(live);
    out_[1] = static_cast<double>(expired);
    out_[2] = static_cast<double>(empty);
    return Napi::Number::New(info.Env(), 0);
  }

  // evictions() -> 0 (out: entries this process evicted, by kind: seen, window, penalty, counter)
  Napi::Value Evictions(const Napi::CallbackInfo& info) {
    if (out_ == nullptr) {
      Napi::Error::New(info.Env(), "the state table is closed").ThrowAsJavaScriptException();
      return info.Env().Undefined();
    }
    out_[0] = static_cast<double>(table_.evictions(shm::kSeenKind));
    out_[1] = static_cast<double>(table_.evictions(shm::kWindowKind));
    out_[2] = static_cast<double>(table_.evictions(shm::kPenaltyKind));
    out_[3] = static_cast<double>(table_.evictions(shm::kCounterKind));
    return Napi::Number::New(info.Env(), 0);
  }

  // setClock(epochMs) -> undefined; 0 returns to the real clock (tests)
  Napi::Value SetClock(const Napi::CallbackInfo& info) {
    table_.SetClock(U64(info[0]));
    return info.Env().Undefined();
  }

  Napi::Value Info(const Napi::CallbackInfo& info) {
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("capacity", static_cast<double>(table_.capacity()));
    o.Set("epochMs", static_cast<double>(table_.epochMs()));
    o.Set("fileBytes", static_cast<double>(table_.fileBytes()));
    o.Set("slotBytes", static_cast<double>(sizeof(shm::Slot)));
    o.Set("headerBytes", static_cast<double>(sizeof(shm::Header)));
    o.Set("probe", static_cast<double>(shm::kProbe));
    o.Set("countMax", static_cast<double>(shm::kCountMax));
    o.Set("scoreMax", static_cast<double>(shm::kScoreMax));
    o.Set("counterMax", static_cast<double>(shm::kCounterMax));
    o.Set("timeMax", static_cast<double>(shm::kTimeMask));
    return o;
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    table_.Close();
    outRef_.Reset();
    out_ = nullptr;
    return info.Env().Undefined();
  }

  shm::Table table_;
  double* out_ = nullptr;
  Napi::Reference<Napi::Float64Array> outRef_;
};

}  // namespace

void InitShmStore(Napi::Env env, Napi::Object exports) { exports.Set("ShmTable", ShmTable::Define(env)); }
