// PBKDF2 and iterated SHA off the event loop. src/pow/derive.ts decides when (above ~100 µs of
// work) and bounds how many run at once; this file only moves one derivation to the pool.
#include "derive-async.h"

#include <openssl/crypto.h>

#include <vector>

#include "napi-args.h"
#include "sha2.h"

namespace palisade {
namespace {

// Runs PBKDF2 or iterated SHA on the libuv thread pool; inputs are copied, so the caller may
// reuse its buffers at once.
class DeriveWorker : public Napi::AsyncWorker {
 public:
  enum class Kind { kPbkdf2, kIteratedSha };

  DeriveWorker(Napi::Env env, Kind kind, HashAlg alg, const Bytes& password, const Bytes& salt,
               uint32_t cost, size_t keyLength)
      : Napi::AsyncWorker(env, "palisade:derive"),
        deferred_(Napi::Promise::Deferred::New(env)),
        kind_(kind),
        alg_(alg),
        password_(password.data, password.data + password.length),
        salt_(salt.data, salt.data + salt.length),
        cost_(cost),
        key_(keyLength) {}

  ~DeriveWorker() override {
    OPENSSL_cleanse(password_.data(), password_.size());
    OPENSSL_cleanse(key_.data(), key_.size());
  }

  Napi::Promise Promise() const { return deferred_.Promise(); }

  void Execute() override {
    if (kind_ == Kind::kPbkdf2) {
      Pbkdf2(alg_, password_.data(), password_.size(), salt_.data(), salt_.size(), cost_, key_.data(), key_.size());
    } else {
      IteratedSha(alg_, salt_.data(), salt_.size(), password_.data(), password_.size(), cost_, key_.data(),
                  key_.size());
    }
  }

  void OnOK() override { deferred_.Resolve(Napi::Buffer<uint8_t>::Copy(Env(), key_.data(), key_.size())); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  Kind kind_;
  HashAlg alg_;
  std::vector<uint8_t> password_;
  std::vector<uint8_t> salt_;
  uint32_t cost_;
  std::vector<uint8_t> key_;
};

// pbkdf2Async(alg, password, salt, iterations, keyLength) / iteratedShaAsync(alg, salt, password,
// cost, keyLength) -> Promise<Buffer>
template <DeriveWorker::Kind kind>
Napi::Value DeriveAsync(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  HashAlg alg;
  Bytes first, second;
  uint32_t cost, keyLength;
  if (!GetAlg(env, info[0], &alg) || !GetBytes(env, info[1], &first) || !GetBytes(env, info[2], &second) ||
      !GetCount(env, info[3], &cost) || !GetCount(env, info[4], &keyLength)) {
    return Napi::Value();
  }
  const bool pbkdf2 = kind == DeriveWorker::Kind::kPbkdf2;
  if (!pbkdf2 && keyLength > DigestLength(alg)) {
    Throw(env, "key longer than the digest");
    return Napi::Value();
  }
  auto* worker = new DeriveWorker(info.Env(), kind, alg, pbkdf2 ? first : second, pbkdf2 ? second : first, cost,
                                  keyLength);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

}  // namespace
}  // namespace palisade

void InitDeriveAsync(Napi::Env env, Napi::Object exports) {
  using namespace palisade;
  exports.Set("pbkdf2Async", Napi::Function::New(env, DeriveAsync<DeriveWorker::Kind::kPbkdf2>, "pbkdf2Async"));
  exports.Set("iteratedShaAsync",
              Napi::Function::New(env, DeriveAsync<DeriveWorker::Kind::kIteratedSha>, "iteratedShaAsync"));
}
