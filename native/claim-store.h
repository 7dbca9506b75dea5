#pragma once
// The claims of used challenges (hard state), kept apart from the soft state of shm-table.h so that
// no flood of counters can take their room (DESIGN.md section 10, last point).
//
// A claim is kept until a moment its caller derives from the challenge itself (its expiry plus a
// clock-skew margin), so the same challenge always names the same moment. Claims are grouped by
// that moment into buckets of kBucketMs; a bucket is a chain of segment files, and a whole bucket
// is deleted once its last moment has passed. Nothing is ever removed from a live segment.
//
// Directory (shared by every process on the host):
//   meta              64-byte header: magic, version, bucket length, SipHash seed, and the bytes
//                     of all segment files (an atomic counter that bounds memory).
//   <bucket>.<gen>    a segment: 64-byte header, then `slots` 8-byte slots (whole 4 KiB pages).
//                     gen 0 is sized to twice the claims of the fullest of the three buckets
//                     before; gen 1 has the smallest size and each further generation is four
//                     times the one before.
//
// Slot: 0 = empty, else a 64-bit fingerprint of the id (bit 0 set). A claim is one CAS of 0 → fp at
// the first empty slot of the id's probe sequence (kProbe slots: six 8-slot cache lines at places
// derived from the id), after checking the slots before it. Because slots only ever go from empty to
// full while a segment lives, the first empty slot of a sequence is where every process claiming the
// same id competes, so exactly one wins (the insert-only open-addressing argument; it holds for any
// fixed sequence). A sequence with no empty slot stays full, so every process moves on to the next
// generation for that id alike.
//
// Bytes per claim: 8 / load. gen 0 is sized to twice the previous buckets' claims (load ~50 % under
// steady traffic: ~16 bytes per claim); a burst overflows into generations that grow fourfold.
//
// The primary (the store opened with removeFiles) prepares the next bucket's gen 0 ahead of its
// first claim and reads its pages once, so the workers' request path only maps files.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace claims {

constexpr uint32_t kProbe = 48;
constexpr uint64_t kBucketMs = 60'000;
constexpr uint32_t kMaxGen = 24;

// Results of Claim.
constexpr int kClaimed = 1;
constexpr int kAlready = 0;
constexpr int kFull = -1;     // the memory bound was reached (or a segment could not be created)
constexpr int kExpired = -3;  // `until` is not in the future: nothing to protect

struct Stats {
  uint64_t bytes;      // bytes of all segment files (the meta counter)
  uint64_t segments;   // segments mapped by this process
  uint64_t claims;     // claims in the segments mapped by this process
  uint64_t buckets;    // buckets mapped by this process
  uint64_t full;       // claims refused for the memory bound by this process
};

class Store {
 public:
  Store() = default;
  ~Store() { Close(); }
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Opens (creating when absent) the directory's meta file. Returns "" or what to do.
  std::string Open(const std::string& dir, uint64_t maxBytes, uint64_t minSlots);
  void Close();
  bool IsOpen() const { return meta_ != nullptr; }

  // Claims `bytes` (the id) until epoch ms `until`: kClaimed, kAlready, kFull or kExpired.
  int Claim(const void* bytes, size_t len, uint64_t until);

  // Unmaps this process's segments of buckets that have ended and, when `removeFiles`, deletes
  // ended buckets' files and abandoned temporary files from the directory, creates the first segment
  // of the bucket after each newest bucket that has claims, and recounts the bytes. Returns the
  // number of files deleted.
  uint64_t Sweep(bool removeFiles);

  Stats GetStats() const;
  // Reads every live segment's header in the directory (all processes' claims, not only this
  // process's buckets): for gauges and the CLI, O(files).
  void Survey(uint64_t* claims, uint64_t* segments, uint64_t* buckets, uint64_t* bytes) const;
  uint64_t maxBytes() const { return maxBytes_; }

  // Tests drive time: a non-zero value replaces CLOCK_REALTIME (epoch ms) for this process.
  void SetClock(uint64_t nowMs) { clockMs_ = nowMs; }
  uint64_t Now() const;

 private:
  struct Segment {
    uint64_t* slots;
    uint64_t n;  // slots
    void* base;
    uint64_t bytes;
    uint64_t* count;
  };
  using Chain = std::vector<Segment>;

  Segment* SegmentOf(uint64_t bucket, uint32_t gen, bool create);
  std::string SegmentPath(uint64_t bucket, uint32_t gen) const;
  bool MapSegment(const std::string& path, Segment* out);
  bool CreateSegment(uint64_t bucket, uint32_t gen, uint64_t slots, const std::string& path);
  uint64_t FirstSlots(uint64_t bucket);
  void Unmap(Chain* chain);

  std::string dir_;
  void* meta_ = nullptr;
  uint64_t* metaBytes_ = nullptr;
  uint64_t seed_[2] = {0, 0};
  uint64_t maxBytes_ = 0;
  uint64_t minSlots_ = 0;
  uint64_t clockMs_ = 0;
  uint64_t full_ = 0;
  std::map<uint64_t, Chain> buckets_;
};

}  // namespace claims
