#include "claim-store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "shm-file.h"
#include "shm-siphash.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the file format is little-endian");

namespace claims {
namespace {

constexpr char kMetaMagic[8] = {'P', 'A', 'L', 'C', 'M', 'E', 'T', 'A'};
constexpr char kSegMagic[8] = {'P', 'A', 'L', 'C', 'L', 'M', '\r', '\n'};
constexpr uint32_t kVersion = 1;
constexpr uint64_t kHeaderBytes = 64;
constexpr uint64_t kMaxSlots = 1ULL << 28;  // 2 GiB per segment
// A bucket's files go only once every process's clock has passed its end by this much.
constexpr uint64_t kDropGraceMs = 10'000;
// Temporary files of a creator that died before publishing are removed after this.
constexpr time_t kTempAgeS = 60;

struct Meta {
  char magic[8];
  uint32_t version;
  uint32_t headerBytes;
  uint64_t bucketMs;
  uint64_t seed[2];
  uint64_t bytes;  // atomic: bytes of all segment files
  uint64_t reserved[2];
};
static_assert(sizeof(Meta) == kHeaderBytes, "meta is 64 bytes");

struct SegHeader {
  char magic[8];
  uint32_t version;
  uint32_t slotBytes;
  uint64_t slots;
  uint64_t bucket;
  uint32_t gen;
  uint32_t headerBytes;
  uint64_t count;  // atomic: claims in this segment
  uint64_t reserved[2];
};
static_assert(sizeof(SegHeader) == kHeaderBytes, "segment header is 64 bytes");

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Slots come in whole pages (512 of 8 bytes), so a segment is sized to what it must hold instead of
// the next power of two (which would waste up to half of it).
constexpr uint64_t kPageSlots = 4096 / sizeof(uint64_t);
uint64_t RoundToPage(uint64_t v) { return (v + kPageSlots - 1) / kPageSlots * kPageSlots; }

// Slots per cache line: an id's probe sequence is kProbe / kLineSlots whole lines at independent
// places. With one contiguous window, runs cluster (linear probing): measured at 50 % load on a
// 2.4-million-slot segment, the longest runs passed 32 slots and every bucket overflowed. With
// independent lines a probe sequence is full only when all six of its lines are.
constexpr uint64_t kLineSlots = 8;

// Each generation and each line of a probe sequence places an id independently of the others, so
// the crowded lines that pushed an id out of gen g are not crowded again in gen g+1.
inline uint64_t Home(uint64_t hi, uint32_t tweak, uint64_t slots) {
  uint64_t x = hi ^ (static_cast<uint64_t>(tweak + 1) * 0x9E3779B97F4A7C15ULL);
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDULL;
  x ^= x >> 33;
  // Lemire's multiply-shift: uniform over any slot count, no division.
  return static_cast<uint64_t>((static_cast<unsigned __int128>(x) * slots) >> 64);
}

// Creates `path` from a temporary file published with link(2): exactly one of several creators wins
// and nobody maps a half-written header. 1 created, 0 someone else's is there, -1 error.
int Publish(const std::string& path, const void* header, uint64_t bytes) {
  uint64_t nonce = 0;
  if (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce) return -1;
  const std::string tmp = path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(nonce);
  const int t = open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (t < 0) return -1;
  int rc = ftruncate(t, static_cast<off_t>(bytes)) == 0 ? 0 : errno;
  if (rc == 0 && pwrite(t, header, kHeaderBytes, 0) != static_cast<ssize_t>(kHeaderBytes)) rc = errno ? errno : EIO;
  close(t);
  if (rc != 0) {
    unlink(tmp.c_str());
    errno = rc;
    return -1;
  }
  const int linked = link(tmp.c_str(), path.c_str());
  const int e = errno;
  unlink(tmp.c_str());
  if (linked == 0) return 1;
  errno = e;
  return e == EEXIST ? 0 : -1;
}

}  // namespace

std::string Store::Open(const std::string& dir, uint64_t maxBytes, uint64_t minSlots) {
  Close();
  const std::string path = dir + "/meta";
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    Meta m;
    std::memset(&m, 0, sizeof m);
    std::memcpy(m.magic, kMetaMagic, sizeof kMetaMagic);
    m.version = kVersion;
    m.headerBytes = kHeaderBytes;
    m.bucketMs = kBucketMs;
    if (getrandom(m.seed, sizeof m.seed, 0) != sizeof m.seed) return Errno("getrandom");
    if (Publish(path, &m, kHeaderBytes) < 0) return Errno("cannot create the claims file " + path);
    fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  }
  if (fd < 0) return Errno("cannot open the claims file " + path);
  Meta m;
  if (pread(fd, &m, sizeof m, 0) != sizeof m || std::memcmp(m.magic, kMetaMagic, sizeof kMetaMagic) != 0) {
    close(fd);
    return path + " is not a Palisade claims file; move the directory away or configure another path";
  }
  if (m.version != kVersion || m.headerBytes != kHeaderBytes || m.bucketMs != kBucketMs) {
    close(fd);
    return "the claims directory " + dir + " has format version " + std::to_string(m.version) +
           " and this build reads version " + std::to_string(kVersion) +
           "; remove it to start afresh (remembered used challenges are lost)";
  }
  void* base = mmap(nullptr, kHeaderBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int e = errno;
  close(fd);
  if (base == MAP_FAILED) {
    errno = e;
    return Errno("cannot map " + path);
  }
  dir_ = dir;
  meta_ = base;
  metaBytes_ = &static_cast<Meta*>(base)->bytes;
  seed_[0] = m.seed[0];
  seed_[1] = m.seed[1];
  maxBytes_ = maxBytes;
  minSlots_ = RoundToPage(std::max<uint64_t>(minSlots, kProbe));
  return "";
}

void Store::Close() {
  for (auto& [bucket, chain] : buckets_) Unmap(&chain);
  buckets_.clear();
  if (meta_ != nullptr) munmap(meta_, kHeaderBytes);
  meta_ = nullptr;
  metaBytes_ = nullptr;
}

uint64_t Store::Now() const { return clockMs_ != 0 ? clockMs_ : shm::RealtimeMs(); }

int Store::Claim(const void* bytes, size_t len, uint64_t until) {
  if (until <= Now()) return kExpired;
  const shm::Hash128 h = shm::SipHash13x128(static_cast<const uint8_t*>(bytes), len, seed_[0], seed_[1]);
  const uint64_t fp = h.lo | 1;
  const uint64_t bucket = until / kBucketMs;
  for (uint32_t gen = 0; gen < kMaxGen; gen++) {
    Segment* seg = SegmentOf(bucket, gen, true);
    if (seg == nullptr) {
      full_++;
      return kFull;
    }
    const uint64_t lines = seg->n / kLineSlots;
    for (uint32_t i = 0; i < kProbe; i++) {
      // The probe sequence: kProbe / kLineSlots cache lines at independent places, each read whole.
      const uint32_t k = i % kLineSlots;
      uint64_t* slot = seg->slots + Home(h.hi, gen * (kProbe / kLineSlots) + i / kLineSlots, lines) * kLineSlots + k;
      uint64_t v = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
      if (v == fp) return kAlready;
      if (v != 0) continue;
      if (__atomic_compare_exchange_n(slot, &v, fp, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        __atomic_fetch_add(seg->count, 1, __ATOMIC_RELAXED);
        return kClaimed;
      }
      if (v == fp) return kAlready;  // another process claimed the same id at this very slot
    }
  }
  full_++;
  return kFull;
}

Store::Segment* Store::SegmentOf(uint64_t bucket, uint32_t gen, bool create) {
  Chain& chain = buckets_[bucket];
  if (gen < chain.size()) return &chain[gen];
  // Generations are mapped in order: a process reaches gen g only through gens 0..g-1.
  const std::string path = SegmentPath(bucket, gen);
  Segment seg;
  if (!MapSegment(path, &seg)) {
    if (errno != ENOENT || !create) return nullptr;
    // gen 0 holds what the buckets before held. An overflow starts small (the few ids whose whole
    // probe sequence was full need little room) and each further generation is four times the one
    // before, so a burst far above the buckets before gets room within a few generations.
    const uint64_t slots = gen == 0 ? FirstSlots(bucket) : std::min(kMaxSlots, minSlots_ << (2 * std::min<uint32_t>(gen - 1, 14)));
    if (!CreateSegment(bucket, gen, slots, path) || !MapSegment(path, &seg)) return nullptr;
  }
  chain.push_back(seg);
  return &chain.back();
}

std::string Store::SegmentPath(uint64_t bucket, uint32_t gen) const {
  return dir_ + "/" + std::to_string(bucket) + "." + std::to_string(gen);
}

bool Store::MapSegment(const std::string& path, Segment* out) {
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  SegHeader h;
  struct stat st;
  if (fstat(fd, &st) != 0 || pread(fd, &h, sizeof h, 0) != sizeof h ||
      std::memcmp(h.magic, kSegMagic, sizeof kSegMagic) != 0 || h.version != kVersion || h.slotBytes != 8 ||
      h.slots < kProbe || h.slots % kLineSlots != 0 || h.slots > kMaxSlots ||
      static_cast<uint64_t>(st.st_size) != kHeaderBytes + h.slots * 8) {
    close(fd);
    errno = EINVAL;  // not ENOENT: a damaged segment is never replaced by an empty one
    return false;
  }
  const uint64_t bytes = kHeaderBytes + h.slots * 8;
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int e = errno;
  close(fd);
  if (base == MAP_FAILED) {
    errno = e == ENOENT ? EIO : e;
    return false;
  }
  out->base = base;
  out->bytes = bytes;
  out->slots = reinterpret_cast<uint64_t*>(static_cast<char*>(base) + kHeaderBytes);
  out->n = h.slots;
  out->count = &static_cast<SegHeader*>(base)->count;
  return true;
}

bool Store::CreateSegment(uint64_t bucket, uint32_t gen, uint64_t slots, const std::string& path) {
  const uint64_t bytes = kHeaderBytes + slots * 8;
  // Reserve the bytes before publishing, so concurrent creators cannot pass the bound together.
  const uint64_t before = __atomic_fetch_add(metaBytes_, bytes, __ATOMIC_ACQ_REL);
  if (before + bytes > maxBytes_) {
    __atomic_fetch_sub(metaBytes_, bytes, __ATOMIC_ACQ_REL);
    errno = ENOSPC;
    return false;
  }
  SegHeader h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kSegMagic, sizeof kSegMagic);
  h.version = kVersion;
  h.slotBytes = 8;
  h.slots = slots;
  h.bucket = bucket;
  h.gen = gen;
  h.headerBytes = kHeaderBytes;
  const int r = Publish(path, &h, bytes);
  if (r != 1) __atomic_fetch_sub(metaBytes_, bytes, __ATOMIC_ACQ_REL);
  if (r == 0) errno = ENOENT;  // someone else's: map theirs
  return r >= 0;
}

// Twice the claims of the fullest of the three buckets before, so steady traffic fills gen 0 to about
// half (16 bytes per claim). Three, because the buckets just before may still be filling: a bucket is
// prepared when the one before it gets its first claim, and challenges issued a little earlier are
// still being solved into the one before that.
uint64_t Store::FirstSlots(uint64_t bucket) {
  uint64_t previous = 0;
  for (uint64_t b = bucket - 3; b < bucket; b++) {
    uint64_t count = 0;
    for (uint32_t gen = 0; gen < kMaxGen; gen++) {
      Segment* seg = SegmentOf(b, gen, false);
      if (seg == nullptr) break;
      count += __atomic_load_n(seg->count, __ATOMIC_RELAXED);
    }
    if (buckets_[b].empty()) buckets_.erase(b);
    previous = std::max(previous, count);
  }
  return std::min(kMaxSlots, std::max(minSlots_, RoundToPage(previous * 2)));
}

void Store::Unmap(Chain* chain) {
  for (const Segment& seg : *chain) munmap(seg.base, seg.bytes);
  chain->clear();
}

uint64_t Store::Sweep(bool removeFiles) {
  const uint64_t now = Now();
  // A bucket holds claims until < (bucket + 1) * kBucketMs: once that has passed, none can be asked for.
  const uint64_t firstLive = now / kBucketMs;
  for (auto it = buckets_.begin(); it != buckets_.end() && it->first < firstLive;) {
    Unmap(&it->second);
    it = buckets_.erase(it);
  }
  if (!removeFiles) return 0;
  const uint64_t firstKept = (now - std::min(now, kDropGraceMs)) / kBucketMs;
  DIR* d = opendir(dir_.c_str());
  if (d == nullptr) return 0;
  uint64_t removed = 0;
  uint64_t bytes = 0;
  std::set<uint64_t> firsts;  // live buckets that have their first segment
  const time_t nowS = static_cast<time_t>(shm::RealtimeMs() / 1000);
  while (dirent* e = readdir(d)) {
    const char* name = e->d_name;
    if (name[0] == '.' || std::strcmp(name, "meta") == 0) continue;
    const std::string path = dir_ + "/" + name;
    struct stat st;
    if (stat(path.c_str(), &st) != 0) continue;
    if (std::strstr(name, ".tmp-") != nullptr) {
      if (nowS - st.st_mtime > kTempAgeS && unlink(path.c_str()) == 0) removed++;
      continue;
    }
    char* end = nullptr;
    const unsigned long long bucket = std::strtoull(name, &end, 10);
    if (end == name || *end != '.') continue;
    if (bucket < firstKept) {
      if (unlink(path.c_str()) == 0) removed++;
      continue;
    }
    bytes += static_cast<uint64_t>(st.st_size);
    if (std::strcmp(end, ".0") == 0 && bucket >= firstLive) firsts.insert(bucket);
  }
  closedir(d);
  // Prepare the bucket after each newest one that has claims, so the first claim of the next minute
  // maps a segment instead of creating one (creating took ~0.65 ms, mapping ~30 µs): this process,
  // not the workers, pays for the file. A bucket with no claims yet gets no successor, so the
  // preparation never runs ahead of traffic.
  for (const uint64_t b : firsts) {
    if (firsts.count(b + 1) != 0) continue;
    Segment* head = SegmentOf(b, 0, false);
    if (head == nullptr || __atomic_load_n(head->count, __ATOMIC_RELAXED) == 0) continue;
    Segment* next = SegmentOf(b + 1, 0, true);
    if (next == nullptr) continue;
    bytes += next->bytes;
    // Read each page once so the kernel holds it: a worker's first write to a page of a fresh
    // segment then costs ~5 µs instead of ~0.5 ms (ext4, a 2 MiB segment; the reads take ~0.7 ms
    // here, in the primary).
    uint64_t sink = 0;
    for (uint64_t i = 0; i < next->n; i += kPageSlots) sink += __atomic_load_n(next->slots + i, __ATOMIC_RELAXED);
    __asm__ volatile("" : : "r"(sink));
  }
  for (auto it = buckets_.begin(); it != buckets_.end();) it = it->second.empty() ? buckets_.erase(it) : std::next(it);
  // The counter only drifts upwards (a creator that died between reserving and publishing); the
  // directory is the truth. A segment being published right now may be missed once, and is counted
  // again at the next sweep.
  __atomic_store_n(metaBytes_, bytes, __ATOMIC_RELEASE);
  return removed;
}

void Store::Survey(uint64_t* claims, uint64_t* segments, uint64_t* buckets, uint64_t* bytes) const {
  *claims = *segments = *buckets = *bytes = 0;
  const uint64_t firstLive = Now() / kBucketMs;
  DIR* d = opendir(dir_.c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    const unsigned long long bucket = std::strtoull(e->d_name, &end, 10);
    if (end == e->d_name || *end != '.' || std::strstr(e->d_name, ".tmp-") != nullptr || bucket < firstLive) continue;
    const int fd = open((dir_ + "/" + e->d_name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    SegHeader h;
    struct stat st;
    if (pread(fd, &h, sizeof h, 0) == sizeof h && fstat(fd, &st) == 0 &&
        std::memcmp(h.magic, kSegMagic, sizeof kSegMagic) == 0) {
      *claims += h.count;
      *segments += 1;
      *bytes += static_cast<uint64_t>(st.st_size);
      if (h.gen == 0) *buckets += 1;
    }
    close(fd);
  }
  closedir(d);
}

Stats Store::GetStats() const {
  Stats s{};
  s.bytes = metaBytes_ != nullptr ? __atomic_load_n(metaBytes_, __ATOMIC_ACQUIRE) : 0;
  s.full = full_;
  for (const auto& [bucket, chain] : buckets_) {
    if (!chain.empty()) s.buckets++;
    for (const Segment& seg : chain) {
      s.segments++;
      s.claims += __atomic_load_n(seg.count, __ATOMIC_RELAXED);
    }
  }
  return s;
}

}  // namespace claims
