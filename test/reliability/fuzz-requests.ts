// fast-check arbitraries of requests over Palisade's public routes for the fuzz test
// (test/reliability/fuzz.test.ts): each route's shape filled with valid, mutated and random parts.
import { createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';

/** Real things to mutate: solved payloads (v2 and v1), a server payload, the key's secret. */
export interface Material {
  keyId: string;
  secret: string;
  v1KeyId: string;
  /** Solved, never submitted: the fuzz spends them. */
  payloads: string[];
  v1Payloads: string[];
  serverPayload: string;
}

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

const printable = fc.string({ unit: 'binary-ascii', maxLength: 40 }).map((s) => s.replace(/[^\x20-\x7e]/g, ''));
const anyText = fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }), printable);
const junkJson = fc.jsonValue({ maxDepth: 4 });

/** A string changed a little: a character replaced, removed or added, cut, doubled, or case-flipped. */
function mutated(s: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constant(s),
    fc.tuple(fc.nat({ max: Math.max(0, s.length - 1) }), fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }))
      .map(([i, c]) => s.slice(0, i) + c + s.slice(i + 1)),
    fc.nat({ max: Math.max(0, s.length - 1) }).map((i) => s.slice(0, i) + s.slice(i + 1)),
    fc.nat({ max: s.length }).map((i) => s.slice(0, i)),
    printable.map((x) => s + x),
    fc.constant(s + s),
    fc.constant(s.toUpperCase()),
  );
}

/** A base64 JSON payload with one of its fields replaced by any JSON value, or nested fields changed. */
function mutatedPayload(b64: string): fc.Arbitrary<string> {
  const decoded = JSON.parse(Buffer.from(b64, 'base64').toString('latin1')) as Record<string, unknown>;
  const paths = leafPaths(decoded);
  return fc.oneof(
    mutated(b64),
    fc.tuple(fc.constantFrom(...paths), junkJson).map(([path, value]) => encode(setPath(decoded, path, value))),
    fc.tuple(fc.constantFrom(...paths), anyText).map(([path, value]) => encode(setPath(decoded, path, value))),
    fc.constantFrom(...paths).map((path) => encode(setPath(decoded, path, undefined))),
    junkJson.map((v) => encode(v)),
    fc.base64String({ maxLength: 200 }),
  );
}

export function requestArb(m: Material): fc.Arbitrary<FuzzRequest> {
  const payload = fc.oneof(
    fc.constantFrom(...m.payloads),
    fc.constantFrom(...m.payloads).chain(mutatedPayload),
    fc.constantFrom(...m.v1Payloads).chain(mutatedPayload),
    mutatedPayload(m.serverPayload),
    anyText,
  );
  const keyId = fc.oneof(fc.constant(m.keyId), fc.constant(m.v1KeyId), mutated(m.keyId), printable);
  // Header values stay valid field values (no control characters): a header section uWS cannot
  // parse is never answered (test/reliability/hostile-http.test.ts covers those).
  const secret = fc.oneof(fc.constant(m.secret), mutated(m.secret), printable).map(fieldValue);
  const json = (value: fc.Arbitrary<unknown>) => value.map((v) => JSON.stringify(v) ?? 'null');
  const authorization = fc.oneof(
    secret.map((s) => `Bearer ${s}`),
    fc.constant(`Bearer ${m.keyId}`),
    printable,
    fc.record({ n: fc.nat({ max: 5_000_000 }), c: fc.stringMatching(/^[0-9a-f]{64}$/) })
      .map(({ n, c }) => `Altcha algorithm=SHA-256, number=${n}, challenge=${c}, salt=${c.slice(0, 24)}?expires=9999999999&, signature=${c}`),
  );
  const extraHeaders = fc.dictionary(
    fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/).filter((h) => !['content-length', 'transfer-encoding', 'host', 'connection', 'expect', 'upgrade'].includes(h.toLowerCase())),
    printable, { maxKeys: 4 },
  );
  const contentType = fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/vnd.api+json', 'multipart/form-data; boundary=x', '');

  // HMAC-signed server requests: right, wrong and replayed signatures over the exact request.
  const signed = (method: string, path: string, body: string) => fc.record({
    salt: fc.oneof(fc.constant(`${Math.floor(Date.now() / 1000)}.${randomBytes(12).toString('base64url')}`), printable,
      fc.constant(`${Math.floor(Date.now() / 1000) - 3600}.${'a'.repeat(20)}`)),
    flip: fc.boolean(),
  }).map(({ salt, flip }) => {
    let signature = createHmac('sha256', m.secret).update(`${salt}\n${method}\n${path}\n${body}`).digest('hex');
    if (flip) signature = (signature[0] === '0' ? '1' : '0') + signature.slice(1);
    return { authorization: `Bearer ${m.keyId}`, 'x-hmac-signature': signature, 'x-hmac-signature-salt': salt };
  });

  const challenge = fc.record({
    key: keyId,
    params: fc.dictionary(fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/), printable), printable, { maxKeys: 12 }),
  }).map(({ key, params }): FuzzRequest => {
    const q = new URLSearchParams({ apiKey: key });
    for (const [k, v] of Object.entries(params)) q.append(`params.${k}`, v);
    return { method: 'GET', path: `/v1/challenge?${q}`, headers: {} };
  });
  const verify = fc.record({
    key: keyId,
    body: fc.oneof(
      fc.record({
        payload,
        fields: fc.option(fc.oneof(fc.dictionary(anyText, anyText, { maxKeys: 60 }), junkJson), { nil: undefined }),
        timeZone: fc.option(fc.oneof(fc.constantFrom('Europe/Berlin', 'UTC'), anyText, junkJson), { nil: undefined }),
        code: fc.option(fc.oneof(anyText, junkJson), { nil: undefined }),
      }, { requiredKeys: [] }).map((b) => JSON.stringify(b)),
      json(junkJson), anyText,
    ),
    type: contentType,
    origin: fc.option(fc.oneof(fc.constant('https://example.com'), printable), { nil: undefined }),
  }).map(({ key, body, type, origin }): FuzzRequest => ({
    method: 'POST', path: `/v1/verify?apiKey=${encodeURIComponent(key)}`, body,
    headers: { ...(type ? { 'content-type': type } : {}), ...(origin === undefined ? {} : { origin }) },
  }));
  const verifySignature = fc.record({
    payload: fc.oneof(mutatedPayload(m.serverPayload), junkJson),
    secret: fc.option(fc.oneof(secret, junkJson), { nil: undefined }),
  }, { requiredKeys: [] }).map((b): FuzzRequest => ({ method: 'POST', path: '/v1/verify/signature', body: JSON.stringify(b), headers: {} }));
  const challengeVerify = fc.record({
    body: fc.record({ payload, apiKey: fc.option(fc.oneof(keyId, junkJson), { nil: undefined }) }, { requiredKeys: [] }).map((b) => JSON.stringify(b)),
    auth: fc.oneof(authorization.map((a) => ({ authorization: a })), fc.constant({})),
    sign: fc.boolean(),
  }).chain(({ body, auth, sign }) => (sign
    ? signed('POST', '/challenge/verify', body).map((h) => ({ body, headers: h }))
    : fc.constant({ body, headers: auth as Record<string, string> })))
    .map(({ body, headers }): FuzzRequest => ({ method: 'POST', path: '/challenge/verify', body, headers }));
  const usage = fc.record({
    month: fc.oneof(fc.constant(''), fc.constant(new Date().toISOString().slice(0, 7)), printable),
    auth: fc.oneof(authorization.map((a) => ({ authorization: a })), fc.constant({})),
    sign: fc.boolean(),
  }).chain(({ month, auth, sign }) => {
    const path = month === '' ? '/usage' : `/usage?month=${encodeURIComponent(month)}`;
    return (sign ? signed('GET', path, '') : fc.constant(auth as Record<string, string>)).map((headers): FuzzRequest => ({ method: 'GET', path, headers }));
  });
  const generate = fc.record({
    hostname: fc.oneof(fc.domain(), anyText, junkJson),
    auth: fc.oneof(authorization.map((a) => ({ authorization: a })), fc.constant({})),
    header: fc.option(fc.constantFrom('x-altcha', 'authorization', 'X Bad'), { nil: undefined }),
  }).map(({ hostname, auth, header }): FuzzRequest => ({
    method: 'POST', path: '/api_key/generate', body: JSON.stringify({ hostname }),
    headers: { ...(auth as Record<string, string>), ...(header === undefined ? {} : { 'x-altcha-authorization-header': header }) },
  }));
  const ops = fc.constantFrom('/.live', '/.ready', '/.health', '/.metrics', '/.well-known/security.txt', '/.live?format=json')
    .map((path): FuzzRequest => ({ method: 'GET', path, headers: {} }));
  const anything = fc.record({
    method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND'),
    path: fc.oneof(
      fc.constantFrom('/v1/challenge', '/v1/verify', '/v1/verify/signature', '/challenge/verify', '/usage', '/api_key/generate',
        '/.live', '/.health', '/.well-known/security.txt', '/', '/v1', '/v1/', '//v1/verify', '/v1/verify/', '/.env', '/wp-login.php'),
      fc.webPath().map((p) => p || '/'),
    ),
    query: fc.option(fc.webQueryParameters(), { nil: undefined }),
    body: fc.option(fc.oneof(json(junkJson), anyText), { nil: undefined }),
    headers: extraHeaders,
  }).map(({ method, path, query, body, headers }): FuzzRequest => ({
    method, path: query === undefined ? path : `${path}?${query}`, body: method === 'GET' || method === 'OPTIONS' ? undefined : body, headers,
  }));

  return fc.tuple(
    fc.oneof(
      { arbitrary: verify, weight: 30 },
      { arbitrary: challenge, weight: 15 },
      { arbitrary: challengeVerify, weight: 15 },
      { arbitrary: verifySignature, weight: 10 },
      { arbitrary: usage, weight: 8 },
      { arbitrary: generate, weight: 7 },
      { arbitrary: ops, weight: 2 },
      { arbitrary: anything, weight: 13 },
    ),
    extraHeaders,
  ).map(([r, extra]) => ({ ...r, headers: { ...extra, ...r.headers } }));
}

/** `s` without the characters a header field value may not hold (RFC 9110 section 5.5). */
function fieldValue(s: string): string {
  return s.replace(/[^\t\x20-\x7e\x80-\xff]/g, '');
}

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value) ?? 'null', 'latin1').toString('base64');
}

function leafPaths(value: unknown, prefix: string[] = []): string[][] {
  if (value === null || typeof value !== 'object') return [prefix];
  const out: string[][] = prefix.length > 0 ? [prefix] : [];
  for (const [k, v] of Object.entries(value)) out.push(...leafPaths(v, [...prefix, k]));
  return out;
}

function setPath(value: Record<string, unknown>, path: string[], leaf: unknown): unknown {
  const copy = structuredClone(value);
  let at: Record<string, unknown> = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string, unknown>;
  if (leaf === undefined) delete at[path.at(-1)!];
  else at[path.at(-1)!] = leaf;
  return copy;
}
