// `plans set NAME --limit N|unlimited` and `plans list`, through the admin domain (src/admin/plans.ts).
import { listAllPlans, setPlan } from '../admin/plans.js';
import { type Context, type Flags, UsageError } from './context.js';

export async function setPlanCommand(rest: string[], ctx: Context, flags: Flags): Promise<void> {
  const name = rest[0];
  if (name === undefined || rest.length > 1) throw new UsageError('plans set needs NAME');
  if (flags.limit === undefined) throw new UsageError('plans set needs --limit N or --limit unlimited');
  let limit: number | null;
  if (flags.limit === 'unlimited') limit = null;
  else if (/^\d{1,15}$/.test(flags.limit)) limit = Number(flags.limit);
  else throw new UsageError('--limit is a non-negative integer or "unlimited"');
  const plan = await setPlan(ctx.admin, name, limit);
  ctx.out(`${plan.name}  ${plan.requestLimit ?? 'unlimited'}`, plan);
}

export async function listPlansCommand(_rest: string[], ctx: Context): Promise<void> {
  const plans = await listAllPlans(ctx.admin);
  ctx.out(plans.map((p) => `${p.name}  ${p.requestLimit ?? 'unlimited'}`).join('\n'), plans);
}
