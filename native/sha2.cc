// SHA-2 on OpenSSL's raw compression function. The SHA*_Init/Update/Final/Transform API is
// deprecated since OpenSSL 3 but still exported by Node, and it is the only way to reach the
// compression function and its state words: EVP gives no access to midstates. Doing the per-key
// work once and allocating nothing per call is where the speed comes from (DESIGN.md section 6:
// 239 ns vs 1,625 ns for createHmac on a 200-byte message).
#define OPENSSL_SUPPRESS_DEPRECATED
#include "sha2.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <cstring>

namespace palisade {
namespace {

struct Sha256T {
  using Ctx = SHA256_CTX;
  using Word = SHA_LONG;
  static constexpr size_t kBlock = 64;
  static constexpr size_t kDigest = 32;
  static void Init(Ctx* c) { SHA256_Init(c); }
  static void Update(Ctx* c, const uint8_t* d, size_t n) { SHA256_Update(c, d, n); }
  static void Final(uint8_t* md, Ctx* c) { SHA256_Final(md, c); }
  static void Compress(Ctx* c, const uint8_t* block) { SHA256_Transform(c, block); }
  // The state after one absorbed block: bit count 512, nothing buffered.
  static void MarkOneBlock(Ctx* c) { c->Nl = kBlock * 8; c->Nh = 0; c->num = 0; }
};

struct Sha512T {
  using Ctx = SHA512_CTX;
  using Word = SHA_LONG64;
  static constexpr size_t kBlock = 128;
  static constexpr size_t kDigest = 64;
  static void Init(Ctx* c) { SHA512_Init(c); }
  static void Update(Ctx* c, const uint8_t* d, size_t n) { SHA512_Update(c, d, n); }
  static void Final(uint8_t* md, Ctx* c) { SHA512_Final(md, c); }
  static void Compress(Ctx* c, const uint8_t* block) { SHA512_Transform(c, block); }
  static void MarkOneBlock(Ctx* c) { c->Nl = kBlock * 8; c->Nh = 0; c->num = 0; }
};

// SHA-384 is SHA-512 with another IV, truncated to six words (Init sets both IV and md_len).
struct Sha384T : Sha512T {
  static constexpr size_t kDigest = 48;
  static void Init(Ctx* c) { SHA384_Init(c); }
  static void Final(uint8_t* md, Ctx* c) { SHA384_Final(md, c); }
};

constexpr size_t kStateWords = 8;

template <class W>
inline W ToBigEndian(W w) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if constexpr (sizeof(W) == 4) return static_cast<W>(__builtin_bswap32(static_cast<uint32_t>(w)));
  else return static_cast<W>(__builtin_bswap64(static_cast<uint64_t>(w)));
#else
  return w;
#endif
}

// Writes the first `bytes` bytes of the big-endian serialisation of h (bytes is a multiple of the
// word size for every digest length used here).
template <class W>
inline void StoreWords(uint8_t* out, const W* h, size_t bytes) {
  for (size_t i = 0; i < bytes / sizeof(W); i++) {
    const W be = ToBigEndian(h[i]);
    std::memcpy(out + i * sizeof(W), &be, sizeof(W));
  }
}

template <class W>
inline void LoadWords(W* h, const uint8_t* in, size_t bytes) {
  for (size_t i = 0; i < bytes / sizeof(W); i++) {
    W be;
    std::memcpy(&be, in + i * sizeof(W), sizeof(W));
    h[i] = ToBigEndian(be);
  }
}

// Final-block padding for a message whose last `used` bytes sit at block[0..used) and whose total
// length is `total` bytes: 0x80, zeros, then the bit length (SHA-512's 128-bit field has its top
// 64 bits zero for any length we hash).
template <class T>
inline void Pad(uint8_t* block, size_t used, uint64_t total) {
  block[used] = 0x80;
  std::memset(block + used + 1, 0, T::kBlock - used - 1 - 8);
  const uint64_t bits = ToBigEndian(static_cast<uint64_t>(total * 8));
  std::memcpy(block + T::kBlock - 8, &bits, 8);
}

template <class T>
void LoadState(typename T::Ctx* c, const uint8_t* words) {
  T::Init(c);
  std::memcpy(c->h, words, sizeof(c->h));
  T::MarkOneBlock(c);
}

template <class T>
void ShaT(const uint8_t* data, size_t n, uint8_t* out) {
  typename T::Ctx c;
  T::Init(&c);
  if (n > 0) T::Update(&c, data, n);
  T::Final(out, &c);
}

template <class T>
void HmacPrepareT(const uint8_t* key, size_t n, uint8_t* state) {
  uint8_t k[T::kBlock] = {0};
  if (n > T::kBlock) {
    ShaT<T>(key, n, k);  // RFC 2104: keys longer than a block are hashed first
  } else if (n > 0) {
    std::memcpy(k, key, n);
  }
  uint8_t pad[T::kBlock];
  typename T::Ctx c;
  constexpr size_t half = sizeof(c.h);
  for (size_t i = 0; i < T::kBlock; i++) pad[i] = k[i] ^ 0x36;
  T::Init(&c);
  T::Compress(&c, pad);
  std::memcpy(state, c.h, half);
  for (size_t i = 0; i < T::kBlock; i++) pad[i] = k[i] ^ 0x5c;
  T::Init(&c);
  T::Compress(&c, pad);
  std::memcpy(state + half, c.h, half);
  OPENSSL_cleanse(k, sizeof(k));
  OPENSSL_cleanse(pad, sizeof(pad));
  OPENSSL_cleanse(&c, sizeof(c));
}

// HMAC over the concatenation a ‖ b (b may be empty), from a prepared state.
template <class T>
void HmacPreparedT(const uint8_t* state, const uint8_t* a, size_t an, const uint8_t* b, size_t bn,
                   uint8_t* out) {
  typename T::Ctx c;
  constexpr size_t half = sizeof(c.h);
  uint8_t block[T::kBlock];
  LoadState<T>(&c, state);
  if (an > 0) T::Update(&c, a, an);
  if (bn > 0) T::Update(&c, b, bn);
  T::Final(block, &c);
  // The outer message is one digest after the key block: a single pre-padded compression.
  Pad<T>(block, T::kDigest, T::kBlock + T::kDigest);
  std::memcpy(c.h, state + half, half);
  T::Compress(&c, block);
  StoreWords(out, c.h, T::kDigest);
}

template <class T>
void HmacT(const uint8_t* key, size_t kn, const uint8_t* data, size_t n, uint8_t* out) {
  uint8_t state[2 * kStateWords * sizeof(typename T::Word)];
  HmacPrepareT<T>(key, kn, state);
  HmacPreparedT<T>(state, data, n, nullptr, 0, out);
  OPENSSL_cleanse(state, sizeof(state));
}

// Each iteration U_j = HMAC(P, U_{j-1}) is exactly two compressions of pre-padded blocks: the
// inner block holds U_{j-1}, the outer block the inner digest, both after one key block.
template <class T>
void Pbkdf2T(const uint8_t* pw, size_t pn, const uint8_t* salt, size_t sn, uint32_t iterations,
             uint8_t* out, size_t outLength) {
  using Word = typename T::Word;
  constexpr size_t half = kStateWords * sizeof(Word);
  constexpr size_t digestWords = T::kDigest / sizeof(Word);
  uint8_t state[2 * half];
  HmacPrepareT<T>(pw, pn, state);
  Word innerH[kStateWords], outerH[kStateWords], acc[kStateWords];
  std::memcpy(innerH, state, half);
  std::memcpy(outerH, state + half, half);

  uint8_t ib[T::kBlock], ob[T::kBlock];
  Pad<T>(ib, T::kDigest, T::kBlock + T::kDigest);
  Pad<T>(ob, T::kDigest, T::kBlock + T::kDigest);
  typename T::Ctx c;
  T::Init(&c);

  for (uint32_t block = 1; outLength > 0; block++) {
    const uint8_t index[4] = {static_cast<uint8_t>(block >> 24), static_cast<uint8_t>(block >> 16),
                              static_cast<uint8_t>(block >> 8), static_cast<uint8_t>(block)};
    uint8_t u[T::kDigest];
    // U_1 = HMAC(P, S ‖ INT(i)); the salt has any length, so it takes the general path.
    HmacPreparedT<T>(state, salt, sn, index, 4, u);
    LoadWords(acc, u, T::kDigest);
    std::memcpy(ib, u, T::kDigest);
    for (uint32_t j = 1; j < iterations; j++) {
      std::memcpy(c.h, innerH, half);
      T::Compress(&c, ib);
      StoreWords(ob, c.h, T::kDigest);
      std::memcpy(c.h, outerH, half);
      T::Compress(&c, ob);
      StoreWords(ib, c.h, T::kDigest);
      for (size_t w = 0; w < digestWords; w++) acc[w] ^= c.h[w];
    }
    StoreWords(u, acc, T::kDigest);
    const size_t take = outLength < T::kDigest ? outLength : T::kDigest;
    std::memcpy(out, u, take);
    out += take;
    outLength -= take;
    OPENSSL_cleanse(u, sizeof(u));
  }
  OPENSSL_cleanse(state, sizeof(state));
  OPENSSL_cleanse(innerH, sizeof(innerH));
  OPENSSL_cleanse(outerH, sizeof(outerH));
  OPENSSL_cleanse(acc, sizeof(acc));
  OPENSSL_cleanse(ib, sizeof(ib));
  OPENSSL_cleanse(ob, sizeof(ob));
  OPENSSL_cleanse(&c, sizeof(c));
}

// After the first hash every message is one digest, so each further round is one compression of
// the pre-padded block holding the previous digest, starting from the IV.
template <class T>
void IteratedShaT(const uint8_t* salt, size_t sn, const uint8_t* pw, size_t pn, uint32_t cost,
                  uint8_t* out, size_t outLength) {
  typename T::Ctx c;
  uint8_t block[T::kBlock];
  T::Init(&c);
  if (sn > 0) T::Update(&c, salt, sn);
  if (pn > 0) T::Update(&c, pw, pn);
  T::Final(block, &c);
  if (cost > 1) {
    Pad<T>(block, T::kDigest, T::kDigest);
    T::Init(&c);
    typename T::Word iv[kStateWords];
    std::memcpy(iv, c.h, sizeof(iv));
    for (uint32_t i = 1; i < cost; i++) {
      std::memcpy(c.h, iv, sizeof(iv));
      T::Compress(&c, block);
      StoreWords(block, c.h, T::kDigest);
    }
  }
  std::memcpy(out, block, outLength);
}

}  // namespace

size_t DigestLength(HashAlg alg) {
  switch (alg) {
    case HashAlg::kSha256: return Sha256T::kDigest;
    case HashAlg::kSha384: return Sha384T::kDigest;
    case HashAlg::kSha512: return Sha512T::kDigest;
  }
  return 0;
}

size_t PreparedStateLength(HashAlg alg) {
  return alg == HashAlg::kSha256 ? 2 * sizeof(SHA256_CTX::h) : 2 * sizeof(SHA512_CTX::h);
}

// One switch per entry point: the algorithm is chosen once per call, never inside a loop.
#define PALISADE_DISPATCH(alg, call)                 \
  switch (alg) {                                     \
    case HashAlg::kSha256: call(Sha256T); break;     \
    case HashAlg::kSha384: call(Sha384T); break;     \
    case HashAlg::kSha512: call(Sha512T); break;     \
  }

void Sha(HashAlg alg, const uint8_t* data, size_t length, uint8_t* out) {
#define CALL(T) ShaT<T>(data, length, out)
  PALISADE_DISPATCH(alg, CALL)
#undef CALL
}

void HmacPrepare(HashAlg alg, const uint8_t* key, size_t keyLength, uint8_t* state) {
#define CALL(T) HmacPrepareT<T>(key, keyLength, state)
  PALISADE_DISPATCH(alg, CALL)
#undef CALL
}

void HmacPrepared(HashAlg alg, const uint8_t* state, const uint8_t* data, size_t length, uint8_t* out) {
#define CALL(T) HmacPreparedT<T>(state, data, length, nullptr, 0, out)
  PALISADE_DISPATCH(alg, CALL)
#undef CALL
}

void Hmac(HashAlg alg, const uint8_t* key, size_t keyLength, const uint8_t* data, size_t length,
          uint8_t* out) {
#define CALL(T) HmacT<T>(key, keyLength, data, length, out)
  PALISADE_DISPATCH(alg, CALL)
#undef CALL
}

void Pbkdf2(HashAlg alg, const uint8_t* password, size_t passwordLength, const uint8_t* salt,
            size_t saltLength, uint32_t iterations, uint8_t* out, size_t outLength) {
#define CALL(T) Pbkdf2T<T>(password, passwordLength, salt, saltLength, iterations, out, outLength)
  PALISADE_DISPATCH(alg, CALL)
#undef CALL
}

void IteratedSha(HashAlg alg, const uint8_t* salt, size_t saltLength, const uint8_t* password,
                 size_t passwordLength, uint32_t cost, uint8_t* out, size_t outLength) {
#define CALL(T) IteratedShaT<T>(salt, saltLength, password, passwordLength, cost, out, outLength)
  PALISADE_DISPATCH(alg, CALL)
#undef CALL
}

}  // namespace palisade
