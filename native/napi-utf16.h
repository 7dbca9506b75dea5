#pragma once
// Reads a JavaScript string argument as its UTF-16 code units (exact for any string, lone
// surrogates included), without allocating for strings up to the stack buffer. Shared by the
// bindings of the soft-state table and the claim store, which both hash ids this way.
#include <napi.h>

#include <string>

namespace palisade {

class Utf16 {
 public:
  // False (with a TypeError thrown) when `value` is not a string.
  bool Read(napi_env env, napi_value value) {
    size_t len = 0;
    if (napi_get_value_string_utf16(env, value, stack_, kStackChars, &len) != napi_ok) {
      Napi::TypeError::New(env, "the key must be a string").ThrowAsJavaScriptException();
      return false;
    }
    if (len < kStackChars - 1) {
      data_ = stack_;
      bytes_ = len * 2;
      return true;
    }
    napi_get_value_string_utf16(env, value, nullptr, 0, &len);  // may have been cut: copy it whole
    whole_.assign(len + 1, u'\0');
    napi_get_value_string_utf16(env, value, whole_.data(), len + 1, &len);
    data_ = whole_.data();
    bytes_ = len * 2;
    return true;
  }
  const void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  static constexpr size_t kStackChars = 256;
  char16_t stack_[kStackChars];
  std::u16string whole_;
  const void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace palisade
