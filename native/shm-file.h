#pragma once
// Opening, creating and mapping the state file (format in shm-table.h). See shm-file.cc.
#include <time.h>

#include <cstdint>
#include <string>

#include "shm-table.h"

namespace shm {

struct Mapping {
  void* base = nullptr;  // the header, then the slots
  uint64_t bytes = 0;
  uint64_t epochMs = 0;
  uint64_t seed[2] = {0, 0};
};

// Opens `path` (creating it when absent) and maps it MAP_SHARED. Returns "" or a message that says
// what to do: a file of another format, capacity or size is refused, never recreated, because
// recreating it would forget which challenges were used.
std::string MapStateFile(const std::string& path, uint64_t capacity, Mapping* out);

// CLOCK_REALTIME in ms: the clock every process on the host shares (Date.now() reads it too).
inline uint64_t RealtimeMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

}  // namespace shm
