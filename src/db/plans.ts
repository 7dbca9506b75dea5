// plans: a monthly request limit per account (null = unlimited). Seeded: free (6000), unlimited.
import type { Queryable } from './client.js';

export interface Plan {
  readonly name: string;
  /** Requests per calendar month and account; null = unlimited. */
  readonly requestLimit: number | null;
}

interface PlanRow { name: string; request_limit: string | number | null }

const toPlan = (r: PlanRow): Plan =>
  Object.freeze({ name: r.name, requestLimit: r.request_limit === null ? null : Number(r.request_limit) });

export const PLAN_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/** Creates or updates a plan. */
export async function setPlan(q: Queryable, name: string, requestLimit: number | null): Promise<Plan> {
  if (!PLAN_NAME.test(name)) throw new Error('a plan name is 1-64 of a-z 0-9 _ . - (starting with a letter or digit)');
  if (requestLimit !== null && (!Number.isSafeInteger(requestLimit) || requestLimit < 0)) {
    throw new Error('a plan limit is a non-negative integer or null (unlimited)');
  }
  for (const statement of q.dialect.insertRows('plans', { name: 'text', request_limit: 'bigint', updated_at: 'timestamp' },
    [[name, requestLimit, new Date()]], { keys: ['name'], set: ['request_limit', 'updated_at'] })) {
    await q.run(statement);
  }
  return (await getPlan(q, name))!;
}

export async function getPlan(q: Queryable, name: string): Promise<Plan | null> {
  const [row] = await q<PlanRow[]>`select name, request_limit from plans where name = ${name}`;
  return row === undefined ? null : toPlan(row);
}

export async function listPlans(q: Queryable): Promise<Plan[]> {
  return (await q<PlanRow[]>`select name, request_limit from plans order by name`).map(toPlan);
}
