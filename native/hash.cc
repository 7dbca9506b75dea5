// N-API surface of the hashing primitives (sha2.cc) plus hex and constant-time compare; the async
// derivations are in derive-async.cc. src/native/ validates every argument before it crosses;
// the checks here (napi-args.cc) only guarantee that a wrong call throws instead of touching memory
// it does not own. Outputs go into caller-provided buffers, so the hot paths allocate nothing here.
#include "hash.h"

#include <openssl/crypto.h>

#include <vector>

#include "derive-async.h"
#include "hex.h"
#include "napi-args.h"
#include "sha2.h"

namespace palisade {
namespace {

// shaInto(alg, data, out)
Napi::Value ShaInto(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  HashAlg alg;
  Input data;
  Bytes out;
  if (!GetAlg(env, info[0], &alg) || !data.Read(env, info[1]) ||
      !GetOutput(env, info[2], DigestLength(alg), &out)) {
    return Napi::Value();
  }
  Sha(alg, data.data(), data.length(), out.data);
  return Napi::Value();
}

// hmacInto(alg, key, data, out)
Napi::Value HmacInto(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  HashAlg alg;
  Bytes key, out;
  Input data;
  if (!GetAlg(env, info[0], &alg) || !GetBytes(env, info[1], &key) || !data.Read(env, info[2]) ||
      !GetOutput(env, info[3], DigestLength(alg), &out)) {
    return Napi::Value();
  }
  Hmac(alg, key.data, key.length, data.data(), data.length(), out.data);
  return Napi::Value();
}

// hmacPrepare(alg, key, state)
Napi::Value HmacPrepareBinding(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  HashAlg alg;
  Bytes key, state;
  if (!GetAlg(env, info[0], &alg) || !GetBytes(env, info[1], &key) ||
      !GetOutput(env, info[2], PreparedStateLength(alg), &state)) {
    return Napi::Value();
  }
  HmacPrepare(alg, key.data, key.length, state.data);
  return Napi::Value();
}

bool ReadPrepared(const Napi::CallbackInfo& info, HashAlg* alg, Bytes* state, Input* data) {
  napi_env env = info.Env();
  return GetAlg(env, info[0], alg) && GetOutput(env, info[1], PreparedStateLength(*alg), state) &&
         data->Read(env, info[2]);
}

// hmacPreparedInto(alg, state, data, out)
Napi::Value HmacPreparedInto(const Napi::CallbackInfo& info) {
  HashAlg alg;
  Bytes state, out;
  Input data;
  if (!ReadPrepared(info, &alg, &state, &data) || !GetOutput(info.Env(), info[3], DigestLength(alg), &out)) {
    return Napi::Value();
  }
  HmacPrepared(alg, state.data, data.data(), data.length(), out.data);
  return Napi::Value();
}

// hmacPreparedHex(alg, state, data) -> lowercase hex string
Napi::Value HmacPreparedHex(const Napi::CallbackInfo& info) {
  HashAlg alg;
  Bytes state;
  Input data;
  if (!ReadPrepared(info, &alg, &state, &data)) return Napi::Value();
  uint8_t mac[kMaxDigestLength];
  char hex[2 * kMaxDigestLength];
  const size_t n = DigestLength(alg);
  HmacPrepared(alg, state.data, data.data(), data.length(), mac);
  EncodeHex(mac, n, hex);
  napi_value result;
  napi_create_string_latin1(info.Env(), hex, 2 * n, &result);
  return Napi::Value(info.Env(), result);
}

// hmacPreparedVerifyHex(alg, state, data, hex) -> bool: hex (either case) names the expected MAC;
// the comparison of the MAC bytes is constant-time.
Napi::Value HmacPreparedVerifyHex(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  HashAlg alg;
  Bytes state;
  Input data;
  HexString hex;
  if (!ReadPrepared(info, &alg, &state, &data)) return Napi::Value();
  const size_t n = DigestLength(alg);
  if (!hex.Read(env, info[3], 2 * n)) return Napi::Value();
  uint8_t mac[kMaxDigestLength], expected[kMaxDigestLength];
  if (!hex.ok() || !DecodeHex(hex.data(), hex.length(), expected)) return Napi::Value(env, Boolean(env, false));
  HmacPrepared(alg, state.data, data.data(), data.length(), mac);
  return Napi::Value(env, Boolean(env, CRYPTO_memcmp(mac, expected, n) == 0));
}

// pbkdf2Into(alg, password, salt, iterations, out)
Napi::Value Pbkdf2Into(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  HashAlg alg;
  Bytes password, salt, out;
  uint32_t iterations;
  if (!GetAlg(env, info[0], &alg) || !GetBytes(env, info[1], &password) || !GetBytes(env, info[2], &salt) ||
      !GetCount(env, info[3], &iterations) || !GetBytes(env, info[4], &out)) {
    return Napi::Value();
  }
  Pbkdf2(alg, password.data, password.length, salt.data, salt.length, iterations, out.data, out.length);
  return Napi::Value();
}

// iteratedShaInto(alg, salt, password, cost, out); out.length <= digest length
Napi::Value IteratedShaInto(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  HashAlg alg;
  Bytes salt, password, out;
  uint32_t cost;
  if (!GetAlg(env, info[0], &alg) || !GetBytes(env, info[1], &salt) || !GetBytes(env, info[2], &password) ||
      !GetCount(env, info[3], &cost) || !GetBytes(env, info[4], &out)) {
    return Napi::Value();
  }
  if (out.length > DigestLength(alg)) {
    Throw(env, "output longer than the digest");
    return Napi::Value();
  }
  IteratedSha(alg, salt.data, salt.length, password.data, password.length, cost, out.data, out.length);
  return Napi::Value();
}

// timingSafeEqual(a, b) -> bool; unequal lengths are simply unequal.
Napi::Value TimingSafeEqual(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  Bytes a, b;
  if (!GetBytes(env, info[0], &a) || !GetBytes(env, info[1], &b)) return Napi::Value();
  if (a.length != b.length) return Napi::Value(env, Boolean(env, false));
  return Napi::Value(env, Boolean(env, a.length == 0 || CRYPTO_memcmp(a.data, b.data, a.length) == 0));
}

// toHex(bytes) -> lowercase hex string
Napi::Value ToHex(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  Bytes in;
  if (!GetBytes(env, info[0], &in)) return Napi::Value();
  char stack[256];
  std::vector<char> heap;
  char* hex = stack;
  if (2 * in.length > sizeof(stack)) {
    heap.resize(2 * in.length);
    hex = heap.data();
  }
  EncodeHex(in.data, in.length, hex);
  napi_value result;
  napi_create_string_latin1(env, hex, 2 * in.length, &result);
  return Napi::Value(env, result);
}

// fromHexInto(string, out) -> bool; out.length must be string.length / 2.
Napi::Value FromHexInto(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  HexString hex;
  Bytes out;
  if (!GetBytes(env, info[1], &out) || !hex.Read(env, info[0], 2 * out.length)) return Napi::Value();
  if (!hex.ok()) return Napi::Value(env, Boolean(env, false));
  return Napi::Value(env, Boolean(env, DecodeHex(hex.data(), hex.length(), out.data)));
}

}  // namespace
}  // namespace palisade

void InitHash(Napi::Env env, Napi::Object exports) {
  using namespace palisade;
  exports.Set("shaInto", Napi::Function::New(env, ShaInto, "shaInto"));
  exports.Set("hmacInto", Napi::Function::New(env, HmacInto, "hmacInto"));
  exports.Set("hmacPrepare", Napi::Function::New(env, HmacPrepareBinding, "hmacPrepare"));
  exports.Set("hmacPreparedInto", Napi::Function::New(env, HmacPreparedInto, "hmacPreparedInto"));
  exports.Set("hmacPreparedHex", Napi::Function::New(env, HmacPreparedHex, "hmacPreparedHex"));
  exports.Set("hmacPreparedVerifyHex", Napi::Function::New(env, HmacPreparedVerifyHex, "hmacPreparedVerifyHex"));
  exports.Set("pbkdf2Into", Napi::Function::New(env, Pbkdf2Into, "pbkdf2Into"));
  exports.Set("iteratedShaInto", Napi::Function::New(env, IteratedShaInto, "iteratedShaInto"));
  exports.Set("timingSafeEqual", Napi::Function::New(env, TimingSafeEqual, "timingSafeEqual"));
  exports.Set("toHex", Napi::Function::New(env, ToHex, "toHex"));
  exports.Set("fromHexInto", Napi::Function::New(env, FromHexInto, "fromHexInto"));
  InitDeriveAsync(env, exports);
}
