// Opening, creating and mapping the state file (format in shm-table.h).
#include "shm-file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the file format is little-endian");

namespace shm {
namespace {

constexpr char kMagic[8] = {'P', 'A', 'L', 'S', 'H', 'M', '\r', '\n'};
constexpr uint32_t kVersion = 2;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Creates the file under a temporary name and publishes it with link(2), which fails when the
// path exists: of several processes starting together, exactly one file wins and nobody ever maps
// a half-written header.
std::string Create(const std::string& path, uint64_t capacity, uint64_t bytes, int* fd) {
  uint64_t nonce = 0;
  if (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce) return Errno("getrandom");
  const std::string tmp = path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(nonce);
  const int t = open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (t < 0) return Errno("cannot create the state file " + tmp);
  // Reserve the blocks now: a sparse file on a full disk would fail later with SIGBUS.
  int rc = posix_fallocate(t, 0, static_cast<off_t>(bytes));
  if (rc == EOPNOTSUPP || rc == EINVAL) rc = ftruncate(t, static_cast<off_t>(bytes)) == 0 ? 0 : errno;
  Header h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.slotBytes = sizeof(Slot);
  h.capacity = capacity;
  h.epochMs = RealtimeMs() - 1;
  h.probe = kProbe;
  h.headerBytes = sizeof(Header);
  if (rc == 0 && getrandom(h.seed, sizeof h.seed, 0) != sizeof h.seed) rc = errno ? errno : EIO;
  if (rc == 0 && pwrite(t, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) rc = errno ? errno : EIO;
  if (rc != 0) {
    close(t);
    unlink(tmp.c_str());
    return "cannot size the state file " + path + " to " + std::to_string(bytes) + " bytes: " + std::strerror(rc);
  }
  if (link(tmp.c_str(), path.c_str()) == 0) {
    unlink(tmp.c_str());
    *fd = t;
    return "";
  }
  const int e = errno;
  close(t);
  unlink(tmp.c_str());
  if (e != EEXIST) {
    errno = e;
    return Errno("cannot publish the state file " + path);
  }
  *fd = open(path.c_str(), O_RDWR | O_CLOEXEC);  // another process created it first
  if (*fd < 0) return Errno("cannot open the state file " + path);
  return "";
}

}  // namespace

std::string MapStateFile(const std::string& path, uint64_t capacity, Mapping* out) {
  const uint64_t bytes = sizeof(Header) + capacity * sizeof(Slot);
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    const std::string err = Create(path, capacity, bytes, &fd);
    if (!err.empty()) return err;
  }
  if (fd < 0) return Errno("cannot open the state file " + path);
  struct stat st;
  Header h;
  std::string err;
  if (fstat(fd, &st) != 0) {
    err = Errno("cannot stat the state file " + path);
  } else if (static_cast<uint64_t>(st.st_size) < sizeof h || pread(fd, &h, sizeof h, 0) != sizeof h ||
             std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) {
    err = path + " is not a Palisade state file; move it away or configure another path";
  } else if (h.version != kVersion || h.slotBytes != sizeof(Slot) || h.probe != kProbe ||
             h.headerBytes != sizeof(Header)) {
    err = "the state file " + path + " has format version " + std::to_string(h.version) +
          " and this build reads version " + std::to_string(kVersion) +
          "; remove the file to start afresh (remembered used challenges are lost)";
  } else if (h.capacity != capacity) {
    err = "the state file " + path + " holds " + std::to_string(h.capacity) + " slots but " +
          std::to_string(capacity) + " are configured; configure " + std::to_string(h.capacity) +
          ", or stop every process and remove the file to resize it (remembered used challenges are lost, " +
          "so challenges verified before could be replayed until they expire)";
  } else if (static_cast<uint64_t>(st.st_size) != bytes) {
    err = "the state file " + path + " is " + std::to_string(st.st_size) + " bytes, expected " +
          std::to_string(bytes) + "; it is damaged: remove it";
  } else if (RealtimeMs() - h.epochMs > kTimeMask - (kTimeMask >> 4)) {
    err = "the state file " + path + " is too old for its 40-bit clock; remove it";
  }
  if (!err.empty()) {
    close(fd);
    return err;
  }
  // MAP_POPULATE: fault every page in now, not one page fault per first touch on the hot path.
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  const int e = errno;
  close(fd);  // the mapping keeps the file
  if (base == MAP_FAILED) {
    errno = e;
    return Errno("cannot map the state file " + path);
  }
  out->base = base;
  out->bytes = bytes;
  out->epochMs = h.epochMs;
  out->seed[0] = h.seed[0];
  out->seed[1] = h.seed[1];
  return "";
}

}  // namespace shm
