#pragma once
#include <napi.h>
// PBKDF2 and iterated SHA on the libuv thread pool (Napi::AsyncWorker), returning promises.
// See derive-async.cc.
void InitDeriveAsync(Napi::Env env, Napi::Object exports);
