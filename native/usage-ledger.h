#pragma once
#include <napi.h>
// The usage ledger's shared mapping and region locks (src/usage/usage-ledger.ts). See usage-ledger.cc.
void InitUsageLedger(Napi::Env env, Napi::Object exports);
