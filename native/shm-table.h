#pragma once
// The lock-free hash table of soft state behind SharedMemoryStore (DESIGN.md section 2.2): rate-limit
// windows, threat marks, penalties and first-seen sets, free of N-API so its rules read in one
// place. shm-store.cc binds it to JavaScript. Claims of used challenges live apart, in
// claim-store.h: nothing here may ever refuse or lose one.
//
// File: a 64-byte header, then `capacity` 16-byte slots {key word, value word}, memory-mapped
// MAP_SHARED by every process on the host. Every change is one 128-bit compare-and-swap
// (cmpxchg16b) of a whole slot; nothing is ever locked, so a process killed at any instruction
// leaves the table consistent.
//
// Key word:   bits 63..24 fingerprint (40 bits of SipHash-1-3 of the key, keyed by the file's seed
//                         and tweaked by the entry kind, so a window and a penalty on the same text differ;
//                         with the home slot from other bits, a false match needs 2^-40 luck per probe)
//             bits 23..4  stamp: when the entry was last used, in kStampMs units (wraps after ~18.6 h,
//                         after which an entry untouched that long may read as recent: soft state only)
//             bits 3..2   the entry's kind (metrics of evictions)
//             bit 1       pending: inserted, not yet committed (see Insert in shm-table.cc)
//             bit 0       always 1, so the key word 0 means "never used"
// Value word: bits 39..0  expiry, ms since the file's epoch (2^40 ms = 34.8 years); 0 = dead.
//                         An entry whose expiry has passed is free for any key.
//             bits 63..40 by kind:
//               seen      0
//               window    bit 63 held (the limit was passed and block/expire holds the key),
//                         bits 62..40 hits in the window (23 bits, saturating at kCountMax).
//                         Not held: expiry = the fixed window's end; held: expiry = held-until.
//               penalty   score (24 bits, saturating at kScoreMax); expiry = last addition + ttl.
//               counter   uses counted (24 bits, at most kCounterMax); expiry fixed at creation.
//
// Lookup: linear probing over at most kProbe slots from the home slot, stopping early at a slot
// that was never used (slots never return to "never used", so nothing lies beyond one).
//
// A fixed budget that evicts: when a key's probe window has no free or expired slot, the entry in
// it used least recently (by stamp) gives way, and the eviction is counted by kind. Every read and
// write of an entry renews its stamp (at most one write per kStampMs). So an attacker who floods
// the table with new keys (rotating source addresses) pushes out only entries nobody has used for
// about capacity / (new keys per second) seconds, the eviction horizon: the counters of other
// rotated addresses, never the mark of an address that keeps coming back within the horizon.
// Counters (plan limits) give way last: one is evicted only when every committed entry of its
// window is a counter, so no flood of other keys can push one out; the caller seeds it again.
#include <cstddef>
#include <cstdint>
#include <string>

namespace shm {

constexpr uint32_t kProbe = 64;
constexpr uint64_t kTimeMask = (1ULL << 40) - 1;
constexpr uint64_t kCountMax = (1ULL << 23) - 1;
constexpr uint64_t kScoreMax = (1ULL << 24) - 1;
constexpr uint64_t kCounterMax = (1ULL << 24) - 1;
constexpr uint64_t kHeldBit = 1ULL << 63;
constexpr uint64_t kPendingBit = 2;
constexpr int kKindShift = 2;
constexpr int kStampShift = 4;
constexpr uint64_t kStampMask = 0xFFFFFULL << kStampShift;
constexpr uint64_t kStampMs = 64;
constexpr uint64_t kFpMask = ~((1ULL << 24) - 1);

// Results of the operations.
constexpr int kFull = -1;  // no slot could be taken within kProbe of the home slot (all pending)
constexpr int kBusy = -2;  // could not complete within kBusyMs (pathological contention)
constexpr int kMissing = -3;  // Count without a seed: the counter does not exist (nothing was stored)

enum Kind : uint64_t { kCounterKind = 0, kSeenKind = 1, kWindowKind = 2, kPenaltyKind = 3 };

struct Slot {
  uint64_t key;
  uint64_t value;
};
static_assert(sizeof(Slot) == 16, "slots are 16 bytes");

struct Header {
  char magic[8];         // "PALSHM\r\n": the CR LF catches text-mode mangling
  uint32_t version;      // kVersion (2: soft state only, with stamps)
  uint32_t slotBytes;    // 16
  uint64_t capacity;     // slots
  uint64_t epochMs;      // CLOCK_REALTIME ms at creation minus one; slot times are relative to it
  uint64_t seed[2];      // SipHash key from getrandom(2)
  uint32_t probe;        // kProbe of the build that created the file
  uint32_t headerBytes;  // 64
  uint64_t reserved;
};
static_assert(sizeof(Header) == 64, "the header keeps slots 16-byte aligned");

// Both words of one slot as read at one moment.
struct Seen {
  uint64_t key;
  uint64_t value;
};

struct Key {
  uint64_t fp;    // the key word without stamp: fingerprint, kind, bit 0 set, bit 1 clear
  uint64_t home;  // first slot of the probe window
};

struct CountState {
  bool allowed;    // counted: the count was below the limit
  uint64_t count;  // the count after the call
};

struct WindowState {
  bool allowed;
  uint64_t count;
  int64_t resetMs;       // ms until the window ends, or until the hold ends when held
  int64_t blockedUntil;  // epoch ms, 0 when not held
};

class Table {
 public:
  Table() = default;
  ~Table() { Close(); }
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;

  // Opens `path`, creating it when absent. Returns "" or a message saying what to do.
  std::string Open(const std::string& path, uint64_t capacity);
  void Close();
  bool IsOpen() const { return slots_ != nullptr; }

  Key MakeKey(Kind kind, uint64_t tweak, const void* bytes, size_t len) const;

  // 1 first seen now, 0 seen before (or being inserted), kFull, kBusy. Soft: may be evicted.
  int Claim(const Key& key, uint64_t ttlMs);
  // Counts one hit. 0, kFull or kBusy.
  int Hit(const Key& key, uint64_t limit, uint64_t windowMs, uint64_t holdMs, WindowState* out);
  // The state a hit would see, without counting. Always 0.
  int Peek(const Key& key, uint64_t limit, uint64_t windowMs, WindowState* out);
  // The new score, kFull or kBusy.
  int64_t AddPenalty(const Key& key, uint64_t n, uint64_t ttlMs);
  // Adds 1 to the counter when it is below `limit` (out->allowed), else leaves it. An absent counter
  // is created at `seed` (clamped to kCounterMax) to live `ttlMs`, or, when `seed` is negative,
  // left absent: kMissing. 0, kMissing, kFull or kBusy.
  int Count(const Key& key, uint64_t limit, int64_t seed, uint64_t ttlMs, CountState* out);
  uint64_t Penalty(const Key& key);
  // Counts `count` slots from `start` (both taken modulo the capacity, wrapping at the end; a count
  // past the capacity counts every slot once). O(count): for gauges, not for the hot path.
  void Occupancy(uint64_t start, uint64_t count, uint64_t* live, uint64_t* expired, uint64_t* empty) const;

  uint64_t capacity() const { return capacity_; }
  uint64_t epochMs() const { return epochMs_; }
  uint64_t fileBytes() const { return bytes_; }
  // Tests drive time: a non-zero value replaces CLOCK_REALTIME (epoch ms) for this process.
  void SetClock(uint64_t epochMs) { clockMs_ = epochMs; }
  // Entries this process evicted, by the evicted entry's kind (index = Kind).
  uint64_t evictions(Kind kind) const { return evictions_[kind]; }

 private:
  Slot* At(uint64_t home, uint32_t distance) const;
  uint64_t NowRel() const;
  int Insert(const Key& key, uint32_t distance, Slot* slot, uint64_t seenKey, uint64_t seenValue, uint64_t now,
             uint64_t pendingExpiry, uint64_t value);
  bool Resolve(const Key& key, uint32_t mine, uint64_t now);
  template <typename Next>
  int Upsert(const Key& key, uint64_t graceMs, bool create, Next next);
  bool Find(const Key& key, uint64_t now, uint64_t* value);
  void Touch(Slot* s, const Seen& c, uint64_t now);
  Slot* Victim(const Key& key, uint64_t now, uint32_t* distance, Seen* seen);
  uint64_t Stamp(uint64_t now) const;

  void* base_ = nullptr;
  Slot* slots_ = nullptr;
  uint64_t bytes_ = 0;
  uint64_t capacity_ = 0;
  uint64_t epochMs_ = 0;
  uint64_t seed_[2] = {0, 0};
  uint64_t evictions_[4] = {0, 0, 0, 0};
  uint64_t clockMs_ = 0;
};

}  // namespace shm
