// Plans: a monthly request limit per account (null = unlimited).
import { listPlans, PLAN_NAME, type Plan, setPlan as upsertPlan } from '../db/plans.js';
import { type AdminContext, audit, invalid, transaction } from './context.js';

export async function listAllPlans(ctx: AdminContext): Promise<Plan[]> {
  return listPlans(ctx.sql);
}

/** Creates or updates a plan. */
export async function setPlan(ctx: AdminContext, name: string, requestLimit: number | null): Promise<Plan> {
  if (!PLAN_NAME.test(name)) invalid('a plan name is 1-64 of a-z 0-9 _ . - (starting with a letter or digit)');
  if (requestLimit !== null && (!Number.isSafeInteger(requestLimit) || requestLimit < 0)) {
    invalid('requestLimit is a non-negative integer or null (unlimited)');
  }
  return transaction(ctx, async (tx) => {
    const plan = await upsertPlan(tx, name, requestLimit);
    await audit(ctx, tx, 'plan.set', name, null, { requestLimit });
    return plan;
  });
}
