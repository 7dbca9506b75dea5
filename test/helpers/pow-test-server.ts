// A minimal node:http host for the proof-of-work route handlers, used by the widget e2e test until
// it runs against the clustered service: adapts node's request to RequestContext, answers
// PalisadeErrors as {"error","statusCode"}, serves a few static files. Plus in-memory stand-ins
// for the store's claimOnce and the key lookups.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { solveChallenge, type Challenge, type DeriveKeyFunction, type Solution } from 'altcha-lib';
import { deriveKey as pbkdf2DeriveKey } from 'altcha-lib/algorithms/pbkdf2';
import { deriveKey as scryptDeriveKey } from 'altcha-lib/algorithms/scrypt';
import { deriveKey as shaDeriveKey } from 'altcha-lib/algorithms/sha';
import { solveChallenge as solveChallengeV1 } from 'altcha-lib/v1';
import argon2 from 'argon2';
import { errorBody, isPalisadeError, PalisadeError } from '../../src/errors.js';
import type { Handler, RequestContext } from '../../src/http/types.js';
import type { ApiKey } from '../../src/keys/types.js';
import { sameSecret } from '../../src/routes/verify-signature.js';

/** claimOnce over a Map: true once per id until its moment passes. */
export function memoryClaimOnce(): ((id: string, untilMs: number) => Promise<boolean>) & { readonly size: () => number } {
  const claims = new Map<string, number>();
  const claimOnce = async (id: string, untilMs: number): Promise<boolean> => {
    const now = Date.now();
    const until = claims.get(id);
    if (until !== undefined && until > now) return false;
    claims.set(id, untilMs);
    return true;
  };
  return Object.assign(claimOnce, { size: () => claims.size });
}

let serial = 0;

export function testKey(overrides: Partial<ApiKey> = {}): ApiKey {
  serial++;
  return {
    id: `key_test${String(serial).padStart(20, '0')}`,
    accountId: 'acc_1',
    name: `test key ${serial}`,
    hostnames: [],
    planId: null,
    challengePolicy: null,
    rateLimit: null,
    enabled: true,
    secret: `sec_${'s'.repeat(24)}${String(serial).padStart(8, '0')}`,
    ...overrides,
  };
}

/** ?apiKey= lookup as the real one does it, without the hostname check (tests use no hostnames). */
export function browserAuthorizer(keys: readonly ApiKey[]): (req: RequestContext) => ApiKey {
  return (req) => {
    const id = req.query.get('apiKey');
    if (!id) throw new PalisadeError('API_KEY_REQUIRED');
    const key = keys.find((k) => k.id === id && k.enabled);
    if (!key) throw new PalisadeError('API_KEY_INVALID');
    return key;
  };
}

/** `Authorization: Bearer sec_…`. */
export function serverAuthorizer(keys: readonly ApiKey[]): (req: RequestContext) => ApiKey {
  return (req) => {
    const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    if (!m) throw new PalisadeError('AUTHORIZATION_REQUIRED');
    const key = keys.find((k) => k.enabled && sameSecret(m[1]!, k.secret));
    if (!key) throw new PalisadeError('API_KEY_INVALID');
    return key;
  };
}

export function keyFinder(keys: readonly ApiKey[]): (id: string) => ApiKey | null {
  return (id) => keys.find((k) => k.id === id) ?? null;
}

export interface StaticFile {
  readonly type: string;
  readonly body: string | Buffer;
}

export interface PowTestServer {
  readonly url: string;
  close(): Promise<void>;
}

const BODY_LIMIT = 64 * 1024;

/** Serves `routes` ("METHOD /path" → handler) and `files` (path → content) on 127.0.0.1, port 0. */
export async function startPowTestServer(
  routes: Readonly<Record<string, Handler>>, files: Readonly<Record<string, StaticFile>> = {},
): Promise<PowTestServer> {
  const server = createServer((req, res) => void handle(req, res));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const file = req.method === 'GET' ? files[url.pathname] : undefined;
    if (file) {
      res.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' }).end(file.body);
      return;
    }
    const handler = routes[`${req.method} ${url.pathname}`];
    if (!handler) return send(res, 404, errorBody('NOT_FOUND'));
    try {
      const body = await readBody(req);
      const reply = await handler(context(req, url, body));
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(reply.body);
    } catch (err) {
      if (isPalisadeError(err)) return send(res, err.statusCode, errorBody(err.code));
      send(res, 500, errorBody('INTERNAL'));
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(body);
}

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  if (req.method === 'GET' || req.method === 'HEAD') return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT) {
        reject(new PalisadeError('BODY_TOO_LARGE'));
        req.destroy();
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A RequestContext as the uWS adapter builds it (src/http/request.ts), from a node request. */
export function context(req: IncomingMessage, url: URL, body: Buffer | null): RequestContext {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return fakeRequest({
    method: req.method ?? 'GET', path: url.pathname, rawQuery: url.search.slice(1), headers,
    ip: req.socket.remoteAddress ?? '', body,
  });
}

export interface FakeRequestInit {
  readonly method?: string;
  readonly path?: string;
  readonly rawQuery?: string;
  readonly headers?: Record<string, string>;
  readonly ip?: string;
  readonly body?: Buffer | string | object | null;
}

/** A RequestContext for calling handlers directly; an object body is sent as JSON. */
export function fakeRequest(init: FakeRequestInit = {}): RequestContext {
  const raw = init.body;
  const body = raw === undefined || raw === null ? null
    : Buffer.isBuffer(raw) ? raw
    : Buffer.from(typeof raw === 'string' ? raw : JSON.stringify(raw));
  const rawQuery = init.rawQuery ?? '';
  return {
    method: init.method ?? 'GET',
    path: init.path ?? '/',
    rawQuery,
    query: new URLSearchParams(rawQuery),
    headers: init.headers ?? {},
    ip: init.ip ?? '203.0.113.77',
    body,
    startedAt: performance.now(),
    json() {
      if (body === null || body.length === 0) throw new PalisadeError('INVALID_JSON');
      try {
        return JSON.parse(body.toString('utf8')) as unknown;
      } catch {
        throw new PalisadeError('INVALID_JSON');
      }
    },
  };
}

// ---- solving with the real client (altcha-lib 2.x) ----------------------------------------------

/** altcha-lib's own derivations; Argon2id through the argon2 package (node:crypto has none on Node 20). */
export function clientDeriveKey(algorithm: string): DeriveKeyFunction {
  if (algorithm.startsWith('SHA-')) return shaDeriveKey;
  if (algorithm.startsWith('PBKDF2/')) return pbkdf2DeriveKey;
  if (algorithm === 'SCRYPT') return scryptDeriveKey;
  return async (parameters, salt, password) => ({
    derivedKey: await argon2.hash(Buffer.from(password), {
      type: argon2.argon2id, raw: true, salt: Buffer.from(salt), timeCost: parameters.cost,
      memoryCost: parameters.memoryCost!, parallelism: parameters.parallelism || 1, hashLength: parameters.keyLength,
    }),
  });
}

/** Solves a v2 challenge (the JSON body of GET /v1/challenge) with altcha-lib and returns the widget payload. */
export async function solveV2(body: string): Promise<{ challenge: Challenge; solution: Solution; payload: string }> {
  const parsed = JSON.parse(body) as Challenge;
  const challenge: Challenge = { parameters: parsed.parameters, signature: parsed.signature };
  const solution = await solveChallenge({ challenge, deriveKey: clientDeriveKey(challenge.parameters.algorithm) });
  if (!solution) throw new Error('altcha-lib found no solution');
  return { challenge, solution, payload: encodePayload({ challenge, solution }) };
}

export interface PayloadV1 {
  algorithm: string;
  challenge: string;
  number: number;
  salt: string;
  signature: string;
  took: number;
}

/** Solves a v1 challenge with altcha-lib/v1 and returns the widget payload. */
export async function solveV1(body: string): Promise<{ payload: string; fields: PayloadV1 }> {
  const c = JSON.parse(body) as { algorithm: string; challenge: string; maxnumber: number; salt: string; signature: string };
  const solution = await solveChallengeV1(c.challenge, c.salt, c.algorithm as 'SHA-256', c.maxnumber).promise;
  if (!solution) throw new Error('altcha-lib/v1 found no solution');
  const fields: PayloadV1 = {
    algorithm: c.algorithm, challenge: c.challenge, number: solution.number, salt: c.salt, signature: c.signature, took: solution.took,
  };
  return { payload: encodePayload(fields), fields };
}

/** base64(JSON), as the widget's btoa(JSON.stringify(…)). */
export function encodePayload(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'latin1').toString('base64');
}
