#include "shm-table.h"

#include <sched.h>
#include <sys/mman.h>

#include <algorithm>

#include "shm-file.h"
#include "shm-siphash.h"

namespace shm {
namespace {

// How long an uncommitted insert holds its slot before others may kill it (a process that died
// between its two CASes). Claims wait longer: a live pending claim answers "already claimed".
constexpr uint64_t kClaimGraceMs = 1000;
constexpr uint64_t kGraceMs = 100;
constexpr uint64_t kBusyMs = 2000;
constexpr int kCommitted = 1, kLost = 0, kRetry = -1;

using u128 = unsigned __int128;

inline u128 Pack(uint64_t key, uint64_t value) { return (static_cast<u128>(value) << 64) | key; }
inline uint64_t Expiry(uint64_t value) { return value & kTimeMask; }
inline uint64_t ClampTime(uint64_t t) { return std::min(t, kTimeMask); }
// The key's entry, committed or pending, whatever its stamp.
inline bool IsFp(uint64_t key, const Key& k) { return (key & ~(kStampMask | kPendingBit)) == k.fp; }
// The key's committed entry, whatever its stamp.
inline bool IsCommitted(uint64_t key, const Key& k) { return (key & ~kStampMask) == k.fp; }
inline uint64_t StampAge(uint64_t key, uint64_t stamp) { return ((stamp - (key & kStampMask)) & kStampMask) >> kStampShift; }

// Both words of one slot as of one moment. The key is read again after the value: a 128-bit CAS
// changes both at once, so equal key reads around the value read mean the pair belongs together
// (short of the same key coming back between two loads, which only costs a retried CAS).
inline Seen Load(const Slot* s) {
  for (;;) {
    const uint64_t key = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
    const uint64_t value = __atomic_load_n(&s->value, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&s->key, __ATOMIC_ACQUIRE) == key) return {key, value};
  }
}

// The key word alone: scans compare fingerprints first and read the pair only for their own key
// (or while still looking for a free slot), one load per slot instead of three.
inline uint64_t LoadKey(const Slot* s) { return __atomic_load_n(&s->key, __ATOMIC_ACQUIRE); }

// One lock cmpxchg16b (with -mcx16, __sync on 16 bytes is inlined; it is also a full barrier, which
// the insert protocol relies on). On failure `seen` receives the slot's current contents.
inline bool Cas(Slot* s, Seen* seen, uint64_t key, uint64_t value) {
  const u128 expected = Pack(seen->key, seen->value);
  const u128 old = __sync_val_compare_and_swap(reinterpret_cast<u128*>(s), expected, Pack(key, value));
  if (old == expected) return true;
  seen->key = static_cast<uint64_t>(old);
  seen->value = static_cast<uint64_t>(old >> 64);
  return false;
}

}  // namespace

std::string Table::Open(const std::string& path, uint64_t capacity) {
  Close();
  Mapping m;
  const std::string err = MapStateFile(path, capacity, &m);
  if (!err.empty()) return err;
  base_ = m.base;
  slots_ = reinterpret_cast<Slot*>(static_cast<char*>(m.base) + sizeof(Header));
  bytes_ = m.bytes;
  capacity_ = capacity;
  epochMs_ = m.epochMs;
  seed_[0] = m.seed[0];
  seed_[1] = m.seed[1];
  return "";
}

void Table::Close() {
  if (base_ != nullptr) munmap(base_, bytes_);
  base_ = nullptr;
  slots_ = nullptr;
}

Key Table::MakeKey(Kind kind, uint64_t tweak, const void* bytes, size_t len) const {
  const Hash128 h = SipHash13x128(static_cast<const uint8_t*>(bytes), len,
                                  seed_[0] ^ (kind * 0x9E3779B97F4A7C15ULL), seed_[1] ^ tweak);
  Key k;
  k.fp = (h.lo & kFpMask) | (static_cast<uint64_t>(kind) << kKindShift) | 1;
  k.home = static_cast<uint64_t>((static_cast<u128>(h.hi) * capacity_) >> 64);
  return k;
}

inline Slot* Table::At(uint64_t home, uint32_t distance) const {
  uint64_t i = home + distance;
  if (i >= capacity_) i -= capacity_;
  return slots_ + i;
}

// CLOCK_REALTIME, the clock every process on the host shares (and Date.now() reads), in ms since
// the file's epoch; never 0, so an expiry of 0 always reads as dead.
inline uint64_t Table::Stamp(uint64_t now) const {
  return (((epochMs_ + now) / kStampMs) << kStampShift) & kStampMask;
}

inline uint64_t Table::NowRel() const {
  const uint64_t now = clockMs_ != 0 ? clockMs_ : RealtimeMs();
  return now > epochMs_ ? std::min(now - epochMs_, kTimeMask - 1) : 1;
}

// Inserting a key that may be absent, without locks. Two processes can pick different free slots
// for the same key (one saw slot A still live, the other saw it expired a moment later), so an
// insert goes in as *pending*, then re-reads the whole probe window (Resolve) and only then
// commits. Both the pending write and the commit are CASes, i.e. full barriers: of two concurrent
// inserters of one key, at least one sees the other's pending entry in its re-read (the
// store-buffer / Dekker argument), and the rules below make exactly one of them commit:
//   - a committed live entry of the key exists      -> lose (undo mine)
//   - a live pending entry closer to home than mine -> lose
//   - a pending entry farther than mine, or expired -> kill it (its owner's commit CAS then fails)
// A pending entry older than its grace is killable, so a process that died between its two CASes
// blocks its key for at most the grace.
int Table::Insert(const Key& key, uint32_t distance, Slot* slot, uint64_t seenKey, uint64_t seenValue,
                  uint64_t now, uint64_t pendingExpiry, uint64_t value) {
  const uint64_t pendingKey = key.fp | kPendingBit;
  const uint64_t pendingValue = (value & ~kTimeMask) | pendingExpiry;
  Seen seen{seenKey, seenValue};
  if (!Cas(slot, &seen, pendingKey, pendingValue)) return kRetry;
  Seen mine{pendingKey, pendingValue};
  if (!Resolve(key, distance, now)) {
    Cas(slot, &mine, key.fp, 0);  // fails only if someone killed it already
    return kLost;
  }
  return Cas(slot, &mine, key.fp | Stamp(now), value) ? kCommitted : kLost;
}

// `now` is the caller's: a moment older than the real time, which only errs towards treating
// another entry as live (losing) rather than expired (killing).
bool Table::Resolve(const Key& key, uint32_t mine, uint64_t now) {
  for (uint32_t i = 0; i < kProbe; i++) {
    if (i == mine) continue;
    Slot* s = At(key.home, i);
    const uint64_t k = LoadKey(s);
    if (k == 0) return true;
    if (!IsFp(k, key)) continue;
    Seen c = Load(s);
    for (;;) {
      if (c.key == 0) return true;
      if (!IsFp(c.key, key)) break;
      const bool live = Expiry(c.value) > now;
      if ((c.key & kPendingBit) == 0) {
        if (live) return false;
        // Retire the expired entry, so an update computed just before it expired (which could
        // extend it, e.g. a block) cannot revive it next to mine.
        if (c.value == 0 || Cas(s, &c, c.key, 0)) break;
        continue;
      }
      if (live && i < mine) return false;
      if (Cas(s, &c, key.fp, 0)) break;
    }
  }
  return true;
}

int Table::Claim(const Key& key, uint64_t ttlMs) {
  const uint64_t start = NowRel();
  for (uint64_t now = start;; now = NowRel()) {
    if (now - start > kBusyMs) return kBusy;
    Slot* reuse = nullptr;
    uint32_t distance = 0;
    Seen seen{0, 0};
    for (uint32_t i = 0; i < kProbe; i++) {
      Slot* s = At(key.home, i);
      const uint64_t k = LoadKey(s);
      if (k != 0 && reuse != nullptr && !IsFp(k, key)) continue;
      const Seen c = Load(s);
      const bool live = Expiry(c.value) > now;
      if (c.key != 0 && live && IsFp(c.key, key)) {
        Touch(s, c, now);
        return 0;
      }
      if ((c.key == 0 || !live) && reuse == nullptr) {
        reuse = s;
        distance = i;
        seen = c;
      }
      if (c.key == 0) break;
    }
    bool evicting = false;
    if (reuse == nullptr) {
      reuse = Victim(key, now, &distance, &seen);
      if (reuse == nullptr) return kFull;
      evicting = true;
    }
    const int r = Insert(key, distance, reuse, seen.key, seen.value, now, ClampTime(now + kClaimGraceMs),
                         ClampTime(now + ttlMs));
    if (r != kRetry && evicting) evictions_[(seen.key >> kKindShift) & 3]++;
    if (r != kRetry) return r == kCommitted ? 1 : 0;
  }
}

// Find the key's committed live entry and CAS `next(found, value, now)` into it, or insert
// `next(false, 0, now)` when there is none (kMissing instead, when !create). One CAS loop on one
// slot per call.
template <typename Next>
int Table::Upsert(const Key& key, uint64_t graceMs, bool create, Next next) {
  const uint64_t start = NowRel();
  for (uint64_t now = start;; now = NowRel()) {
    if (now - start > kBusyMs) return kBusy;
    Slot* found = nullptr;
    Seen fc{0, 0};
    Slot* reuse = nullptr;
    uint32_t distance = 0;
    Seen seen{0, 0};
    bool pending = false;
    for (uint32_t i = 0; i < kProbe; i++) {
      Slot* s = At(key.home, i);
      const uint64_t k = LoadKey(s);
      if (k != 0 && reuse != nullptr && !IsFp(k, key)) continue;
      const Seen c = Load(s);
      const bool live = Expiry(c.value) > now;
      if (c.key != 0 && live && IsFp(c.key, key)) {
        if ((c.key & kPendingBit) == 0) {
          found = s;
          fc = c;
          break;
        }
        pending = true;  // another process is creating it: use theirs once committed
        continue;
      }
      if ((c.key == 0 || !live) && reuse == nullptr) {
        reuse = s;
        distance = i;
        seen = c;
      }
      if (c.key == 0) break;
    }
    if (found != nullptr) {
      while (IsCommitted(fc.key, key) && Expiry(fc.value) > now) {
        if (Cas(found, &fc, key.fp | Stamp(now), next(true, fc.value, now))) return 0;
        now = NowRel();
      }
      continue;  // retired or reused meanwhile: look again
    }
    if (pending) {
      sched_yield();
      continue;
    }
    if (!create) return kMissing;
    bool evicting = false;
    if (reuse == nullptr) {
      reuse = Victim(key, now, &distance, &seen);
      if (reuse == nullptr) return kFull;
      evicting = true;
    }
    const uint64_t value = next(false, 0, now);
    const int r = Insert(key, distance, reuse, seen.key, seen.value, now, ClampTime(now + graceMs), value);
    if (r != kRetry && evicting) evictions_[(seen.key >> kKindShift) & 3]++;
    if (r == kCommitted) return 0;
  }
}

int Table::Hit(const Key& key, uint64_t limit, uint64_t windowMs, uint64_t holdMs, WindowState* out) {
  return Upsert(key, kGraceMs, true, [&](bool found, uint64_t v, uint64_t now) -> uint64_t {
    uint64_t expiry;
    uint64_t count;
    bool held;
    if (found) {
      expiry = Expiry(v);
      count = (v >> 40) & kCountMax;
      held = (v & kHeldBit) != 0;
    } else {
      // Fixed windows are aligned to the Unix epoch, as in RedisStore, so both agree on boundaries.
      const uint64_t nowAbs = epochMs_ + now;
      expiry = ClampTime((nowAbs / windowMs + 1) * windowMs - epochMs_);
      count = 0;
      held = false;
    }
    count = std::min(count + 1, kCountMax);
    out->allowed = !held && count <= limit;
    if (!held && count > limit && holdMs > 0) {
      held = true;
      expiry = std::max(expiry, ClampTime(now + holdMs));  // never shorter than the window itself
    }
    out->count = count;
    out->resetMs = static_cast<int64_t>(expiry - now);
    out->blockedUntil = held ? static_cast<int64_t>(epochMs_ + expiry) : 0;
    return (held ? kHeldBit : 0) | (count << 40) | expiry;
  });
}

bool Table::Find(const Key& key, uint64_t now, uint64_t* value) {
  for (uint32_t i = 0; i < kProbe; i++) {
    Slot* s = At(key.home, i);
    const uint64_t k = LoadKey(s);
    if (k == 0) return false;
    if (!IsCommitted(k, key)) continue;
    const Seen c = Load(s);
    if (IsCommitted(c.key, key) && Expiry(c.value) > now) {
      *value = c.value;
      Touch(s, c, now);
      return true;
    }
  }
  return false;
}

// Renews a committed entry's stamp when it is from an earlier unit: a read keeps an entry as
// recently used as a write does, at the cost of at most one CAS per entry per kStampMs. A lost CAS
// means someone else just changed the slot, which renews it or replaces it: nothing to do.
void Table::Touch(Slot* s, const Seen& c, uint64_t now) {
  const uint64_t stamp = Stamp(now);
  if ((c.key & kPendingBit) != 0 || (c.key & kStampMask) == stamp) return;
  Seen expected = c;
  Cas(s, &expected, (c.key & ~kStampMask) | stamp, c.value);
}

// The committed entry of the window used least recently, counters last (a counter only when the
// window holds nothing else), or nullptr when every slot is pending (only under extreme contention;
// the caller then fails as before). Called only when no slot of the window is free or expired.
Slot* Table::Victim(const Key& key, uint64_t now, uint32_t* distance, Seen* seen) {
  const uint64_t stamp = Stamp(now);
  Slot* victim = nullptr;
  bool victimIsCounter = true;
  uint64_t oldest = 0;
  for (uint32_t i = 0; i < kProbe; i++) {
    Slot* s = At(key.home, i);
    const uint64_t k = LoadKey(s);
    if (k == 0 || (k & kPendingBit) != 0) continue;
    const bool counter = ((k >> kKindShift) & 3) == kCounterKind;
    const uint64_t age = StampAge(k, stamp);
    if (victim == nullptr || (victimIsCounter && !counter) || (counter == victimIsCounter && age > oldest)) {
      victim = s;
      victimIsCounter = counter;
      oldest = age;
      *distance = i;
    }
  }
  if (victim != nullptr) *seen = Load(victim);
  return victim;
}

int Table::Peek(const Key& key, uint64_t limit, uint64_t windowMs, WindowState* out) {
  const uint64_t now = NowRel();
  uint64_t v = 0;
  if (!Find(key, now, &v)) {
    const uint64_t nowAbs = epochMs_ + now;
    out->allowed = true;
    out->count = 0;
    out->resetMs = static_cast<int64_t>(ClampTime((nowAbs / windowMs + 1) * windowMs - epochMs_) - now);
    out->blockedUntil = 0;
    return 0;
  }
  const bool held = (v & kHeldBit) != 0;
  out->count = (v >> 40) & kCountMax;
  out->allowed = !held && out->count < limit;
  out->resetMs = static_cast<int64_t>(Expiry(v) - now);
  out->blockedUntil = held ? static_cast<int64_t>(epochMs_ + Expiry(v)) : 0;
  return 0;
}

int64_t Table::AddPenalty(const Key& key, uint64_t n, uint64_t ttlMs) {
  uint64_t score = 0;
  const int r = Upsert(key, kGraceMs, true, [&](bool found, uint64_t v, uint64_t now) -> uint64_t {
    score = std::min((found ? v >> 40 : 0) + n, kScoreMax);
    return (score << 40) | ClampTime(now + ttlMs);
  });
  return r == 0 ? static_cast<int64_t>(score) : r;
}

int Table::Count(const Key& key, uint64_t limit, int64_t seed, uint64_t ttlMs, CountState* out) {
  return Upsert(key, kGraceMs, seed >= 0, [&](bool found, uint64_t v, uint64_t now) -> uint64_t {
    uint64_t count = found ? v >> 40 : std::min(static_cast<uint64_t>(seed), kCounterMax);
    const uint64_t expiry = found ? Expiry(v) : ClampTime(now + ttlMs);
    out->allowed = count < limit && count < kCounterMax;
    if (out->allowed) count++;
    out->count = count;
    return (count << 40) | expiry;
  });
}

uint64_t Table::Penalty(const Key& key) {
  uint64_t v = 0;
  return Find(key, NowRel(), &v) ? v >> 40 : 0;
}

void Table::Occupancy(uint64_t start, uint64_t count, uint64_t* live, uint64_t* expired, uint64_t* empty) const {
  const uint64_t now = NowRel();
  *live = *expired = *empty = 0;
  start %= capacity_;
  count = std::min(count, capacity_);
  for (uint64_t n = 0, i = start; n < count; n++, i = i + 1 == capacity_ ? 0 : i + 1) {
    const Seen c = Load(slots_ + i);
    if (c.key == 0) ++*empty;
    else if (Expiry(c.value) > now) ++*live;
    else ++*expired;
  }
}

}  // namespace shm
