// The training data API (server-side, API-key authorised; docs/classifier.md): the examples of the
// key's account that the SIMILARITY rule compares submissions with.
//   GET    /v1/training[?group=G]        200 {"examples":[{id, group, text, threshold, weight, source, createdAt}]}
//   POST   /v1/training                  {text, group?, threshold?, weight?} → 201 the example
//   DELETE /v1/training?id=trn_…         200 {"id":…, "removed":true}; 404 NOT_FOUND
// A change applies at once in the worker that made it and within CACHE_DURATION_TRAINING_DATA elsewhere.
import type { Queryable } from '../db/client.js';
import { trainingAddSpec, trainingListSpec, trainingRemoveSpec } from '../api-schema/classifier.js';
import { bodyCheck, queryCheck } from '../api-schema/validate.js';
import { addTrainingExample, listTrainingData, removeTrainingExample, type TrainingExample } from '../db/training-data.js';
import { PalisadeError } from '../errors.js';
import type { Handler, RequestContext } from '../http/types.js';
import { json } from '../http/types.js';
import type { ApiKey } from '../keys/types.js';

export interface TrainingRouteDeps {
  readonly authorize: (req: RequestContext) => Promise<ApiKey>;
  readonly sql: Queryable;
  /** Forgets the account's cached index in this worker. */
  readonly invalidate: (accountId: string) => void;
}

const NO_STORE = { 'cache-control': 'no-store' };
const bad = (message: string) => new PalisadeError('INVALID_PARAMETER', message);

// The queries and bodies are checked against the schemas of /v1/docs (src/api-schema/classifier.ts).
const checkList = queryCheck(trainingListSpec);
const checkAdd = bodyCheck(trainingAddSpec);
const checkRemove = queryCheck(trainingRemoveSpec);

interface NewExample {
  readonly text: string;
  readonly group?: string;
  readonly threshold?: number;
  readonly weight?: number;
}

export function trainingRoutes(deps: TrainingRouteDeps): { list: Handler; add: Handler; remove: Handler } {
  return {
    async list(req) {
      const key = await deps.authorize(req);
      checkList(req.query);
      const group = req.query.get('group') ?? undefined;
      const examples = await listTrainingData(deps.sql, key.accountId, group);
      return json({ examples: examples.map(view) }, 200, NO_STORE);
    },
    async add(req) {
      const key = await deps.authorize(req);
      const body = req.json();
      checkAdd(body);
      const { text, group, threshold, weight } = body as NewExample;
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
      checkRemove(req.query);
      const id = req.query.get('id')!;
      if (!(await removeTrainingExample(deps.sql, key.accountId, id))) throw new PalisadeError('NOT_FOUND', 'no such training example in this account');
      deps.invalidate(key.accountId);
      return json({ id, removed: true }, 200, NO_STORE);
    },
  };
}

function view(e: TrainingExample) {
  return { id: e.id, group: e.group, text: e.text, threshold: e.threshold, weight: e.weight, source: e.source, createdAt: e.createdAt.toISOString() };
}
