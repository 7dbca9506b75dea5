// The routes whose input is parsed by hand (the hot paths GET /v1/challenge and POST /v1/verify,
// and POST /v1/classifier, whose parser also normalises) accept and refuse exactly what their
// schemas in /v1/docs say, with the same error code: inputs derived from each schema
// (test/helpers/schema-cases.ts) go through both. The other routes validate with the compiled
// schemas themselves (src/api-schema/validate.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifierSpec } from '../../src/api-schema/classifier.js';
import { API_ROUTES } from '../../src/api-schema/index.js';
import { challengeSpec, VERIFY_MAX_FIELDS, verifySpec } from '../../src/api-schema/pow.js';
import { compileCheck, queryObject } from '../../src/api-schema/validate.js';
import { RULE_NAMES } from '../../src/classifier/classify.js';
import { parseClassifierRequest } from '../../src/classifier/request.js';
import { VOCABULARY_LANGUAGES } from '../../src/classifier/text/index.js';
import { ERRORS, isPalisadeError } from '../../src/errors.js';
import { parseChallengeParams } from '../../src/pow/challenge.js';
import { parseVerifyBody, VERIFY_ROUTE_DEFAULTS } from '../../src/routes/verify.js';
import type { JsonSchema, RouteSpec } from '../../src/api-schema/types.js';
import { objectCases } from '../helpers/schema-cases.js';

/** 'accepted', or the code it was refused with. */
function verdict(run: () => unknown): string {
  try {
    run();
    return 'accepted';
  } catch (err) {
    if (isPalisadeError(err)) return err.code;
    throw err;
  }
}

/** As the input arrives: through JSON. */
const overJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

function compare(spec: RouteSpec, schema: JsonSchema, cases: unknown[], parse: (input: unknown) => unknown, what: string) {
  const check = compileCheck(schema, spec.invalid ?? 'INVALID_PARAMETER', what);
  const tally = new Map<string, number>();
  for (const input of cases) {
    const bySchema = verdict(() => check(input));
    const byParser = verdict(() => parse(input));
    assert.equal(byParser, bySchema, `${spec.method} ${spec.path}: ${JSON.stringify(input).slice(0, 300)}`);
    tally.set(bySchema, (tally.get(bySchema) ?? 0) + 1);
  }
  return tally;
}

test('POST /v1/verify: parseVerifyBody accepts and refuses what the body schema does, with the same code', () => {
  assert.equal(VERIFY_MAX_FIELDS, VERIFY_ROUTE_DEFAULTS.maxFields);
  const cases = objectCases(verifySpec.body!).map(overJson);
  const tally = compare(verifySpec, verifySpec.body!, cases, (b) => parseVerifyBody(b, VERIFY_ROUTE_DEFAULTS.maxFields), 'the body');
  assert.ok((tally.get('accepted') ?? 0) >= 20, JSON.stringify([...tally]));
  assert.ok((tally.get('INVALID_PAYLOAD') ?? 0) >= 10, JSON.stringify([...tally]));
  assert.ok((tally.get('INVALID_PARAMETER') ?? 0) >= 20, JSON.stringify([...tally]));
});

test('GET /v1/challenge: parseChallengeParams accepts and refuses the params.<name> the query schema does', () => {
  const cases = objectCases(challengeSpec.query!, { strings: true }) as Record<string, string>[];
  const query = (c: Record<string, string>) => new URLSearchParams(Object.entries(c));
  const check = compileCheck(challengeSpec.query!, 'INVALID_PARAMETER', 'the query');
  let refused = 0;
  for (const c of cases) {
    const bySchema = verdict(() => check(queryObject(query(c))));
    assert.equal(verdict(() => parseChallengeParams(query(c))), bySchema, JSON.stringify(c));
    if (bySchema !== 'accepted') refused++;
  }
  assert.ok(refused >= 10 && refused < cases.length - 10, `${refused} of ${cases.length} refused`);
  // The schema cannot count a family of names: ten is the parser's alone, and documented.
  const eleven = new URLSearchParams(Array.from({ length: 11 }, (_, i): [string, string] => [`params.p${i}`, 'v']));
  assert.equal(verdict(() => parseChallengeParams(eleven)), 'INVALID_PARAMETER');
  assert.match(String(challengeSpec.query!.description), /at most 10 names/);
});

test('POST /v1/classifier: parseClassifierRequest accepts and refuses what the body schema does', () => {
  const options = { ruleNames: RULE_NAMES, classifiers: new Set(VOCABULARY_LANGUAGES) };
  const cases = objectCases(classifierSpec.body!).map(overJson);
  const tally = compare(classifierSpec, classifierSpec.body!, cases, (b) => parseClassifierRequest(b, options), 'the body');
  assert.ok((tally.get('accepted') ?? 0) >= 50, JSON.stringify([...tally]));
  assert.ok((tally.get('INVALID_PARAMETER') ?? 0) >= 50, JSON.stringify([...tally]));
});

test('every route description: schemas compile, codes are in the catalogue, operation ids are unique', () => {
  const ids = new Set<string>();
  for (const spec of API_ROUTES) {
    assert.ok(!ids.has(spec.operationId), spec.operationId);
    ids.add(spec.operationId);
    for (const code of [...spec.errors, spec.invalid ?? 'INVALID_PARAMETER']) assert.ok(code in ERRORS, `${spec.path}: ${code}`);
    for (const schema of [spec.query, spec.body, ...Object.values(spec.responses).map((r) => r.schema)]) {
      if (schema !== undefined) compileCheck(schema, 'INVALID_PARAMETER', 'x');
    }
    const text = JSON.stringify([spec.query, spec.body]);
    for (const m of text.matchAll(/"x-error":"([A-Z_]+)"/g)) assert.ok(m[1]! in ERRORS, `${spec.path}: x-error ${m[1]}`);
  }
});
