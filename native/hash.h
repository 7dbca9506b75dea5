#pragma once
#include <napi.h>
// Hashing: SHA-2, HMAC, iterated SHA, PBKDF2, constant-time compare, hex. See hash.cc.
void InitHash(Napi::Env env, Napi::Object exports);
