#pragma once
// Argument readers for the hashing bindings. Each returns false after throwing a TypeError
// (code ERR_INVALID_ARG_TYPE) into the env, so a wrong call never touches memory it does not own;
// src/native/ has already validated, so these only guard the boundary. See napi-args.cc.
#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sha2.h"

namespace palisade {

struct Bytes {
  uint8_t* data = nullptr;
  size_t length = 0;
};

bool Throw(napi_env env, const char* message);
// A Uint8Array (Buffer included), read from its byte offset.
bool GetBytes(napi_env env, napi_value v, Bytes* out);
// A Uint8Array of exactly `length` bytes.
bool GetOutput(napi_env env, napi_value v, size_t length, Bytes* out);
bool GetAlg(napi_env env, napi_value v, HashAlg* alg);
// A uint32 >= 1.
bool GetCount(napi_env env, napi_value v, uint32_t* n);
napi_value Boolean(napi_env env, bool b);

// A Uint8Array or a string (taken as UTF-8). Strings up to the scratch size are converted into a
// per-thread buffer, so hashing a JSON string costs no allocation; longer ones use the heap.
class Input {
 public:
  bool Read(napi_env env, napi_value v);
  const uint8_t* data() const { return bytes_.data; }
  size_t length() const { return bytes_.length; }

 private:
  Bytes bytes_;
  std::vector<char> heap_;
};

// A JS string read as UTF-16 code units (so no character can be folded into an ASCII digit), on
// the stack when short. Read() fails only on a non-string; ok() is false, and nothing is copied,
// when the length is not `want`.
class HexString {
 public:
  bool Read(napi_env env, napi_value v, size_t want);
  bool ok() const { return ok_; }
  const char16_t* data() const { return data_; }
  size_t length() const { return length_; }

 private:
  static constexpr size_t kStack = 258;  // a SHA-512 MAC in hex, plus the terminator
  char16_t stack_[kStack];
  std::vector<char16_t> heap_;
  const char16_t* data_ = nullptr;
  size_t length_ = 0;
  bool ok_ = false;
};

}  // namespace palisade
