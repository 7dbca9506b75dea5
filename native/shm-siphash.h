#pragma once
// SipHash-1-3 with a 128-bit output (Aumasson & Bernstein; reference: https://github.com/veorq/SipHash
// siphash.c with cROUNDS=1, dROUNDS=3, outlen=16). The shared-memory table keys it with the random
// seed in its file header: one output word is the slot fingerprint, the other picks the home slot,
// so the two are independent and an outsider cannot aim ids at one probe window.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace shm {

struct Hash128 {
  uint64_t lo;
  uint64_t hi;
};

inline uint64_t Rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

#define SHM_SIPROUND                                                             \
  do {                                                                           \
    v0 += v1; v1 = Rotl(v1, 13); v1 ^= v0; v0 = Rotl(v0, 32);                    \
    v2 += v3; v3 = Rotl(v3, 16); v3 ^= v2;                                       \
    v0 += v3; v3 = Rotl(v3, 21); v3 ^= v0;                                       \
    v2 += v1; v1 = Rotl(v1, 17); v1 ^= v2; v2 = Rotl(v2, 32);                    \
  } while (0)

inline Hash128 SipHash13x128(const uint8_t* in, size_t len, uint64_t k0, uint64_t k1) {
  uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
  uint64_t v1 = (0x646f72616e646f6dULL ^ k1) ^ 0xee;
  uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
  uint64_t v3 = 0x7465646279746573ULL ^ k1;
  const uint8_t* end = in + (len & ~static_cast<size_t>(7));
  for (; in != end; in += 8) {
    uint64_t m;
    std::memcpy(&m, in, 8);  // little-endian hosts only (x86-64, aarch64), as the file format
    v3 ^= m;
    SHM_SIPROUND;
    v0 ^= m;
  }
  uint64_t b = static_cast<uint64_t>(len) << 56;
  switch (len & 7) {
    case 7: b |= static_cast<uint64_t>(in[6]) << 48; [[fallthrough]];
    case 6: b |= static_cast<uint64_t>(in[5]) << 40; [[fallthrough]];
    case 5: b |= static_cast<uint64_t>(in[4]) << 32; [[fallthrough]];
    case 4: b |= static_cast<uint64_t>(in[3]) << 24; [[fallthrough]];
    case 3: b |= static_cast<uint64_t>(in[2]) << 16; [[fallthrough]];
    case 2: b |= static_cast<uint64_t>(in[1]) << 8; [[fallthrough]];
    case 1: b |= static_cast<uint64_t>(in[0]); break;
    default: break;
  }
  v3 ^= b;
  SHM_SIPROUND;
  v0 ^= b;
  v2 ^= 0xee;
  SHM_SIPROUND; SHM_SIPROUND; SHM_SIPROUND;
  Hash128 out;
  out.lo = v0 ^ v1 ^ v2 ^ v3;
  v1 ^= 0xdd;
  SHM_SIPROUND; SHM_SIPROUND; SHM_SIPROUND;
  out.hi = v0 ^ v1 ^ v2 ^ v3;
  return out;
}

#undef SHM_SIPROUND

}  // namespace shm
