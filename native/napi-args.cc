#include "napi-args.h"

namespace palisade {

namespace {
constexpr size_t kScratch = 16384;
}  // namespace

bool Throw(napi_env env, const char* message) {
  napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", message);
  return false;
}

bool GetBytes(napi_env env, napi_value v, Bytes* out) {
  napi_typedarray_type type;
  void* data = nullptr;
  size_t length = 0;
  if (napi_get_typedarray_info(env, v, &type, &length, &data, nullptr, nullptr) != napi_ok ||
      type != napi_uint8_array) {
    return Throw(env, "expected a Uint8Array");
  }
  out->data = static_cast<uint8_t*>(data);
  out->length = length;
  return true;
}

bool GetOutput(napi_env env, napi_value v, size_t length, Bytes* out) {
  if (!GetBytes(env, v, out)) return false;
  if (out->length != length) return Throw(env, "output buffer has the wrong length");
  return true;
}

bool GetAlg(napi_env env, napi_value v, HashAlg* alg) {
  uint32_t id;
  if (napi_get_value_uint32(env, v, &id) != napi_ok || id >= kHashAlgCount) {
    return Throw(env, "unknown hash algorithm");
  }
  *alg = static_cast<HashAlg>(id);
  return true;
}

bool GetCount(napi_env env, napi_value v, uint32_t* n) {
  if (napi_get_value_uint32(env, v, n) != napi_ok || *n == 0) return Throw(env, "expected a positive uint32");
  return true;
}

napi_value Boolean(napi_env env, bool b) {
  napi_value r;
  napi_get_boolean(env, b, &r);
  return r;
}

bool Input::Read(napi_env env, napi_value v) {
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok) return Throw(env, "expected a string or Uint8Array");
  if (t != napi_string) return GetBytes(env, v, &bytes_);
  thread_local std::vector<char> scratch(kScratch);
  size_t written = 0;
  napi_get_value_string_utf8(env, v, scratch.data(), scratch.size(), &written);
  // V8 stops before a character that does not fit (at most 4 bytes), so with 5 bytes to spare
  // (the terminator included) the string was converted whole.
  if (written + 5 <= scratch.size()) {
    bytes_.data = reinterpret_cast<uint8_t*>(scratch.data());
    bytes_.length = written;
    return true;
  }
  size_t length = 0;
  napi_get_value_string_utf8(env, v, nullptr, 0, &length);
  heap_.resize(length + 1);
  napi_get_value_string_utf8(env, v, heap_.data(), heap_.size(), &written);
  bytes_.data = reinterpret_cast<uint8_t*>(heap_.data());
  bytes_.length = written;
  return true;
}

bool HexString::Read(napi_env env, napi_value v, size_t want) {
  size_t length = 0;
  if (napi_get_value_string_utf16(env, v, nullptr, 0, &length) != napi_ok) return Throw(env, "expected a string");
  if (length != want) return true;
  char16_t* buffer = stack_;
  if (length + 1 > kStack) {
    heap_.resize(length + 1);
    buffer = heap_.data();
  }
  napi_get_value_string_utf16(env, v, buffer, length + 1, &length);
  data_ = buffer;
  length_ = length;
  ok_ = length == want;
  return true;
}

}  // namespace palisade
