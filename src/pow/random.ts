// Random bytes for the hot paths from a pooled CSPRNG buffer: one randomFillSync per 4 KiB instead of
// one per request (randomBytes(32) was ~3% of a challenge's CPU and randomBytes(12) ~5% of a
// verification's in profiles: each call crosses into OpenSSL's locked generator). Every caller gets
// its own copy and the pool's bytes are wiped as they are handed out, so no two callers ever share
// bytes and a refill never changes bytes already handed out.
import { randomFillSync } from 'node:crypto';

const POOL = Buffer.alloc(4096);
let offset = POOL.length;

/** `n` (1–256) fresh random bytes. */
export function pooledRandomBytes(n: number): Buffer {
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new RangeError('pooledRandomBytes: n must be an integer from 1 to 256');
  if (offset + n > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const out = Buffer.allocUnsafe(n);
  POOL.copy(out, 0, offset, offset + n);
  POOL.fill(0, offset, offset + n);
  offset += n;
  return out;
}
