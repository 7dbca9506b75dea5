// The usage ledger's two needs from the system (the file format and the counting protocol live in
// src/usage/usage-ledger.ts and src/usage/ledger-cells.ts): a MAP_SHARED mapping that JavaScript
// reads and writes through typed arrays, so counting a request is a plain store with no call into
// C++; and byte-range locks that the kernel releases when their process dies, which is how an
// owner of a region is told apart from a dead one. src/native/ validates every argument.
#include "usage-ledger.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace {

bool Args(const Napi::CallbackInfo& info, const char* usage) {
  if (info.Length() >= 2 && info[0].IsNumber() && info[1].IsNumber()) return true;
  Napi::TypeError::New(info.Env(), usage).ThrowAsJavaScriptException();
  return false;
}

Napi::Value Fail(Napi::Env env, const std::string& what) {
  Napi::Error::New(env, what + ": " + std::strerror(errno)).ThrowAsJavaScriptException();
  return env.Undefined();
}

// mapShared(fd, bytes) -> ArrayBuffer over the first `bytes` of the file, MAP_SHARED: every store
// is in the page cache the moment it executes, so a process killed after it cannot take it along.
// The mapping is released by the ArrayBuffer's finalizer and never before, so no view can outlive it.
Napi::Value MapShared(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!Args(info, "mapShared(fd, bytes)")) return env.Undefined();
  const int fd = info[0].As<Napi::Number>().Int32Value();
  const size_t bytes = static_cast<size_t>(info[1].As<Napi::Number>().Int64Value());
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return Fail(env, "cannot map the usage ledger");
  return Napi::ArrayBuffer::New(
      env, base, bytes, [](Napi::Env, void* data, size_t* length) {
        munmap(data, *length);
        delete length;
      },
      new size_t(bytes));
}

// reserve(fd, bytes) -> undefined: the file's blocks, allocated now (a sparse file on a full disk
// would raise SIGBUS at the first store into a page that has none).
Napi::Value Reserve(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!Args(info, "reserve(fd, bytes)")) return env.Undefined();
  const int fd = info[0].As<Napi::Number>().Int32Value();
  const off_t bytes = static_cast<off_t>(info[1].As<Napi::Number>().Int64Value());
  int rc = posix_fallocate(fd, 0, bytes);
  if (rc == EOPNOTSUPP || rc == EINVAL) rc = ftruncate(fd, bytes) == 0 ? 0 : errno;
  if (rc != 0) {
    errno = rc;
    return Fail(env, "cannot size the usage ledger to " + std::to_string(bytes) + " bytes");
  }
  return env.Undefined();
}

// Open file description locks (F_OFD_*): held by the descriptor, not the process, so two opens in
// one process exclude each other too, and closing another descriptor of the file releases nothing.
int LockByte(int fd, off_t offset, short type) {
  struct flock fl;
  std::memset(&fl, 0, sizeof fl);
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = offset;
  fl.l_len = 1;
  return fcntl(fd, F_OFD_SETLK, &fl);
}

// lockByte(fd, offset) -> true when this descriptor now holds the write lock on that byte, false
// when another holds it.
Napi::Value Lock(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!Args(info, "lockByte(fd, offset)")) return env.Undefined();
  if (LockByte(info[0].As<Napi::Number>().Int32Value(), info[1].As<Napi::Number>().Int64Value(), F_WRLCK) == 0) {
    return Napi::Boolean::New(env, true);
  }
  if (errno == EAGAIN || errno == EACCES) return Napi::Boolean::New(env, false);
  return Fail(env, "cannot lock a usage ledger region");
}

// unlockByte(fd, offset) -> undefined
Napi::Value Unlock(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!Args(info, "unlockByte(fd, offset)")) return env.Undefined();
  if (LockByte(info[0].As<Napi::Number>().Int32Value(), info[1].As<Napi::Number>().Int64Value(), F_UNLCK) != 0) {
    return Fail(env, "cannot unlock a usage ledger region");
  }
  return env.Undefined();
}

}  // namespace

void InitUsageLedger(Napi::Env env, Napi::Object exports) {
  Napi::Object ledger = Napi::Object::New(env);
  ledger.Set("mapShared", Napi::Function::New(env, MapShared, "mapShared"));
  ledger.Set("reserve", Napi::Function::New(env, Reserve, "reserve"));
  ledger.Set("lockByte", Napi::Function::New(env, Lock, "lockByte"));
  ledger.Set("unlockByte", Napi::Function::New(env, Unlock, "unlockByte"));
  exports.Set("usageLedger", ledger);
}
