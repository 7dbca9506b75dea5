// The native addon's typed wrappers, one module per binding family. Only addon.ts loads the binary;
// every wrapper validates its arguments (args.ts) before they cross into C++, so the C++ side can
// trust types and lengths. Importing this module loads the addon and checks it has every binding the
// wrappers need.
//   addon.ts         loads build/Release/palisade.node (the only require of it)
//   args.ts          argument checks and their TypeError / RangeError
//   hash.ts          SHA-2, HMAC, PBKDF2, iterated SHA, constant-time equality, hex (native/hash.cc)
//   shm-table.ts     the shared-memory soft-state table (native/shm-store.cc)
//   claim-store.ts   the used-challenge claims (native/claim-binding.cc)
//   shared-file.ts   shared file mappings and byte locks of the usage ledger (native/usage-ledger.cc)
export {
  HASH_ALGORITHMS, type HashAlgorithm, type PreparedHmacKey, digestLength, fromHex, hmac, hmacPrepared, hmacPreparedHex,
  hmacPreparedInto, hmacPreparedVerifyHex, iteratedSha, iteratedShaAsync, pbkdf2, pbkdf2Async, prepareHmacKey, sha,
  timingSafeEqual, toHex,
} from './hash.js';
export {
  SHM_BUSY, SHM_FULL, SHM_MAX_CAPACITY, SHM_MIN_CAPACITY, SHM_MISSING, ShmTable, type ShmTableInfo,
} from './shm-table.js';
export { CLAIM_EXPIRED, CLAIM_FULL, CLAIM_MIN_SLOTS, ClaimStore, type ClaimStoreStats } from './claim-store.js';
export { lockFileByte, mapSharedFile, reserveFile, unlockFileByte } from './shared-file.js';
