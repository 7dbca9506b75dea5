// Addon entry point: registers each feature's exports. One feature per .cc file.
#include <napi.h>

#include "claim-binding.h"
#include "hash.h"
#include "shm-store.h"
#include "usage-ledger.h"

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  InitHash(env, exports);
  InitShmStore(env, exports);
  InitClaimStore(env, exports);
  InitUsageLedger(env, exports);
  return exports;
}

NODE_API_MODULE(palisade, Init)
