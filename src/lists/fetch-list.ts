// One download of a list: a deadline over the whole transfer, a size limit enforced while the
// body arrives (the transfer is aborted the moment it passes the limit, so a huge or endless
// response costs at most the limit), and failures as a small set of reasons (metric labels).
import { request } from 'undici';
import type { Outbound } from './outbound.js';

export const FAILURE_REASONS = ['timeout', 'http_status', 'too_large', 'too_many_entries', 'network', 'invalid'] as const;
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
  // Credentials in the URL (user:password@) travel as HTTP Basic auth; the outbound dispatcher's
  // redirect interceptor drops the header when a redirect leaves the origin (MaxMind redirects to
  // its storage host).
  const authorization = target.username !== ''
    ? `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}`
    : null;
  target.username = '';
  target.password = '';
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; controller.abort(); }, options.timeoutMs);
  const onAbort = () => controller.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const headers: Record<string, string> = { 'user-agent': options.outbound.userAgent, accept: 'text/plain, */*' };
    if (authorization !== null) headers.authorization = authorization;
    const res = await request(target, { method: 'GET', dispatcher: options.outbound.dispatcherFor(target), headers, signal: controller.signal });
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
