#pragma once
// Lowercase hex out; either case in, nothing else (no whitespace, no prefix, even length).
#include <cstddef>
#include <cstdint>

namespace palisade {

inline void EncodeHex(const uint8_t* in, size_t n, char* out) {
  constexpr char kDigits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = kDigits[in[i] >> 4];
    out[2 * i + 1] = kDigits[in[i] & 15];
  }
}

inline int HexValue(char16_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes n UTF-16 code units into n / 2 bytes; false (out partly written) on odd n or a non-digit.
inline bool DecodeHex(const char16_t* in, size_t n, uint8_t* out) {
  if (n % 2 != 0) return false;
  for (size_t i = 0; i < n / 2; i++) {
    const int hi = HexValue(in[2 * i]);
    const int lo = HexValue(in[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

}  // namespace palisade
