// One download of a list: a deadline over the whole transfer, a size limit enforced while the
// body arrives (the transfer is aborted the moment it passes the limit, so a huge or endless
// response costs at most the limit), and failures as a small set of reasons (metric labels).
import { request } from 'undici';
import type { Outbound } from './outbound.js';

export const FAILURE_REASONS = ['timeout', 'http_status', 'too_large', 'too_many_entries', 'network'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

export class ListFetchError extends Error {
  readonly reason: FailureReason;
  /** The HTTP status for `http_status`. */
  readonly status: number | undefined;
  constructor(reason: FailureReason, message: string, status?: number) {
    super(message);
    this.name = 'ListFetchError';
    this.reason = reason;
    this.status = status;
  }
}

export interface FetchListOptions {
  readonly outbound: Outbound;
  /** Bytes. */
  readonly sizeLimit: number;
  /** The whole transfer, headers and body. */
  readonly timeoutMs: number;
  /** Aborts the transfer (shutdown). */
  readonly signal?: AbortSignal;
}

export async function fetchList(url: string, options: FetchListOptions): Promise<Buffer> {
  const target = new URL(url);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; controller.abort(); }, options.timeoutMs);
  const onAbort = () => controller.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const res = await request(target, {
      method: 'GET',
      dispatcher: options.outbound.dispatcherFor(target),
      headers: { 'user-agent': options.outbound.userAgent, accept: 'text/plain, */*' },
      signal: controller.signal,
    });
    if (res.statusCode < 200 || res.statusCode > 299) {
      await res.body.dump().catch(() => {});
      throw new ListFetchError('http_status', `HTTP ${res.statusCode}`, res.statusCode);
    }
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > options.sizeLimit) {
      res.body.destroy();
      throw new ListFetchError('too_large', `Content-Length ${declared} is over the limit of ${options.sizeLimit} bytes`);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of res.body) {
      total += (chunk as Buffer).length;
      if (total > options.sizeLimit) {
        res.body.destroy();
        controller.abort();
        throw new ListFetchError('too_large', `more than the limit of ${options.sizeLimit} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks, total);
  } catch (err) {
    if (err instanceof ListFetchError) throw err;
    if (timedOut) throw new ListFetchError('timeout', `no complete answer within ${options.timeoutMs} ms`);
    const e = err as NodeJS.ErrnoException & { cause?: { code?: string } };
    throw new ListFetchError('network', e.code ?? e.cause?.code ?? e.name ?? 'network error');
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}
