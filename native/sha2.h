#pragma once
// SHA-2 primitives without N-API: plain hashing, HMAC from precomputed midstates, PBKDF2 and the
// iterated SHA of PROTOCOL.md section 1. Callers pass valid pointers and lengths; nothing here
// allocates. See sha2.cc.
#include <cstddef>
#include <cstdint>

namespace palisade {

enum class HashAlg : uint32_t { kSha256 = 0, kSha384 = 1, kSha512 = 2 };

constexpr uint32_t kHashAlgCount = 3;
constexpr size_t kMaxDigestLength = 64;

size_t DigestLength(HashAlg alg);

// A prepared HMAC key: the inner and outer hash states after absorbing key ^ ipad and key ^ opad,
// as host-order state words (SHA-256: 2 × 32 bytes, SHA-384/512: 2 × 64 bytes). Any byte pattern is
// memory-safe to load: only the state words are taken from it.
size_t PreparedStateLength(HashAlg alg);

void Sha(HashAlg alg, const uint8_t* data, size_t length, uint8_t* out);

void HmacPrepare(HashAlg alg, const uint8_t* key, size_t keyLength, uint8_t* state);

// out receives DigestLength(alg) bytes.
void HmacPrepared(HashAlg alg, const uint8_t* state, const uint8_t* data, size_t length, uint8_t* out);

void Hmac(HashAlg alg, const uint8_t* key, size_t keyLength, const uint8_t* data, size_t length,
          uint8_t* out);

// RFC 8018 section 5.2; iterations >= 1, any outLength.
void Pbkdf2(HashAlg alg, const uint8_t* password, size_t passwordLength, const uint8_t* salt,
            size_t saltLength, uint32_t iterations, uint8_t* out, size_t outLength);

// d = H(salt ‖ password), then d = H(d) until `cost` hashes in all; out = d[0:outLength].
// cost >= 1, outLength <= DigestLength(alg).
void IteratedSha(HashAlg alg, const uint8_t* salt, size_t saltLength, const uint8_t* password,
                 size_t passwordLength, uint32_t cost, uint8_t* out, size_t outLength);

}  // namespace palisade
