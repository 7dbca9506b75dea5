#pragma once
#include <napi.h>
// The claim store of used challenges (claim-store.h). See claim-binding.cc.
void InitClaimStore(Napi::Env env, Napi::Object exports);
