// Reading a request body within its limit and its time: every chunk copied as uWS requires, a body
// refused while it arrives (413 BODY_TOO_LARGE, 408 REQUEST_TIMEOUT), and what is left of a refused
// body read and thrown away so that the client sees the answer.
import type { HttpResponse } from 'uWebSockets.js';
import { PalisadeError } from '../errors.js';
import type { Pending } from './traffic.js';

const EMPTY = Buffer.alloc(0);

/** A refused body is read and thrown away up to this many bytes in all… */
export const DISCARD_BYTES = 16 * 1024 * 1024;
/** …and for this long at most, before the 413 and the close. */
export const DISCARD_MS = 2_000;

/**
 * Reads the whole body, refusing it once it passes `limit` (BODY_TOO_LARGE) or when it is not
 * complete within `timeoutMs` (REQUEST_TIMEOUT); every chunk is copied. `done` is called once,
 * inside uWS's onData callback (or the timer's), and never after the client has gone.
 *
 * A refused body is not answered at once: what is left of it is read and thrown away first, up to
 * DISCARD_BYTES in all and for DISCARD_MS at most. Closing a connection with bytes unread makes the
 * kernel reset it, and a client still sending loses the answer to the reset before it reads it
 * (uWS closes at once after the answer, with no lingering close), so it would see a reset instead
 * of the 413. A negative `limit` refuses the body from its first byte (a declared length already
 * too large). Nothing of a refused body is kept.
 */
export function readBody(res: HttpResponse, p: Pending, limit: number, timeoutMs: number,
  done: (err: PalisadeError | null, body: Buffer) => void): void {
  // Once settled, nothing the handlers or the timer can reach holds the request (its body, and
  // through `done` its headers and route). While they held it, a worker under S2 load kept two to
  // five times the bytes past its scavenges, on a heap half again as large, with two to three times
  // the mark-compacts (measured with a sampling heap profile, commit 0dc695d); which reference kept them
  // alive that long was not pinned down.
  let chunks: Buffer[] | null = limit < 0 ? null : [];
  let size = 0;
  let pending: typeof done | null = done;
  const expire = () => {
    const err = new PalisadeError(chunks === null ? 'BODY_TOO_LARGE' : 'REQUEST_TIMEOUT');
    settle()?.(err, EMPTY);
  };
  let timer = setTimeout(expire, timeoutMs);
  /** `done` the first time, null after; lets go of everything either way. */
  const settle = () => {
    const callback = pending;
    pending = null;
    chunks = null;
    clearTimeout(timer);
    p.onAbort = null;
    return callback;
  };
  p.onAbort = settle;
  res.onData((chunk, isLast) => {
    if (pending === null) return;
    size += chunk.byteLength;
    if (chunks !== null && size > limit) {
      // Refused: from here on, count what arrives until its end, DISCARD_BYTES or DISCARD_MS.
      chunks = null;
      clearTimeout(timer);
      timer = setTimeout(expire, DISCARD_MS);
    }
    if (chunks === null) {
      if (isLast || size > DISCARD_BYTES) settle()!(new PalisadeError('BODY_TOO_LARGE'), EMPTY);
      return;
    }
    chunks.push(Buffer.from(chunk.slice(0))); // the copy uWS requires, wrapped without a second copy
    if (isLast) {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      settle()!(null, body);
    }
  });
}

/** readBody as a Promise, awaited later unless a pre-route reply wins: never an unhandled rejection. */
export function readBodyPromise(res: HttpResponse, p: Pending, limit: number, timeoutMs: number): Promise<Buffer> {
  const body = new Promise<Buffer>((resolve, reject) => {
    readBody(res, p, limit, timeoutMs, (err, buf) => (err ? reject(err) : resolve(buf)));
  });
  body.catch(() => {});
  return body;
}
