#pragma once
#include <napi.h>
// The shared-memory state table (DESIGN.md section 2.2). See shm-store.cc.
void InitShmStore(Napi::Env env, Napi::Object exports);
