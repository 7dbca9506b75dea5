// The training data API (server-side, API-key authorised; docs/classifier.md): the examples of the
// key's account that the SIMILARITY rule compares submissions with.
//   GET    /v1/training[?group=G]        200 {"examples":[{id, group, text, threshold, weight, source, createdAt}]}
//   POST   /v1/training                  {text, group?, threshold?, weight?} → 201 the example
//   DELETE /v1/training?id=trn_…         200 {"id":…, "removed":true}; 404 NOT_FOUND
// A change applies at once in the worker that made it and within CACHE_DURATION_TRAINING_DATA elsewhere.
import type { Queryable } from '../db/client.js';
import { addTrainingExample, listTrainingData, removeTrainingExample, TRAINING_LIMITS, type TrainingExample } from '../db/training-data.js';
import { PalisadeError } from '../errors.js';
import type { Handler, RequestContext } from '../http/types.js';
import { json } from '../http/types.js';
import type { ApiKey } from '../keys/types.js';
import { isObject } from '../pow/payload.js';

export interface TrainingRouteDeps {
  readonly authorize: (req: RequestContext) => Promise<ApiKey>;
  readonly sql: Queryable;
  /** Forgets the account's cached index in this worker. */
  readonly invalidate: (accountId: string) => void;
}

const NO_STORE = { 'cache-control': 'no-store' };
const bad = (message: string) => new PalisadeError('INVALID_PARAMETER', message);

export function trainingRoutes(deps: TrainingRouteDeps): { list: Handler; add: Handler; remove: Handler } {
  return {
    async list(req) {
      const key = await deps.authorize(req);
      const group = req.query.get('group') ?? undefined;
      if (group !== undefined && !TRAINING_LIMITS.groupPattern.test(group)) throw bad('group must be 1-64 of a-z 0-9 _ . - starting with a letter or digit');
      const examples = await listTrainingData(deps.sql, key.accountId, group);
      return json({ examples: examples.map(view) }, 200, NO_STORE);
    },
    async add(req) {
      const key = await deps.authorize(req);
      const body = req.json();
      if (!isObject(body)) throw bad('the body must be a JSON object');
      for (const name of Object.keys(body)) if (!['text', 'group', 'threshold', 'weight'].includes(name)) throw bad(`unknown field "${name.slice(0, 40)}"`);
      const { text, group, threshold, weight } = body;
      if (typeof text !== 'string') throw bad('text must be a string');
      if (group !== undefined && typeof group !== 'string') throw bad('group must be a string');
      if (threshold !== undefined && typeof threshold !== 'number') throw bad('threshold must be a number');
      if (weight !== undefined && typeof weight !== 'number') throw bad('weight must be a number');
      let example: TrainingExample;
      try {
        example = await addTrainingExample(deps.sql, { accountId: key.accountId, text, group, threshold, weight, source: `api:${key.id}` });
      } catch (err) {
        if (err instanceof RangeError) throw bad(err.message);
        throw err;
      }
      deps.invalidate(key.accountId);
      return json(view(example), 201, NO_STORE);
    },
    async remove(req) {
      const key = await deps.authorize(req);
      const id = req.query.get('id');
      if (id === null || !/^trn_[0-9A-Za-z]{16}$/.test(id)) throw bad('id must be a training example id (trn_…)');
      if (!(await removeTrainingExample(deps.sql, key.accountId, id))) throw new PalisadeError('NOT_FOUND', 'no such training example in this account');
      deps.invalidate(key.accountId);
      return json({ id, removed: true }, 200, NO_STORE);
    },
  };
}

function view(e: TrainingExample) {
  return { id: e.id, group: e.group, text: e.text, threshold: e.threshold, weight: e.weight, source: e.source, createdAt: e.createdAt.toISOString() };
}
