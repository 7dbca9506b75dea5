// The admin API's reading routes and the classifier's data (docs/admin.md): usage, statistics per
// hour and day, request logs, the audit log, training data, spam submissions, threat sources and
// the effective configuration (secrets redacted).
import { describeConfig } from '../config/describe.js';
import type { Config } from '../config/index.js';
import { PalisadeError } from '../errors.js';
import { threatsStatus } from '../intel/threats-status.js';
import { addTraining, auditLog, getSubmission, listSubmissions, listTraining, logView, promoteSubmission, removeTraining, requestLogs, stats, submissionView, trainingView, usageSummary } from '../admin/data.js';
import { dateParam, intParam, num, only, param, text } from '../admin/input.js';
import { getKey } from '../admin/keys.js';
import { body, id, type Call, type Kit, needRole, reply, scope, self, visible } from './admin-kit.js';

export function dataRoutes(kit: Kit): void {
  const { add, config, ownAccount } = kit;
  // --- usage, statistics, request logs, audit
  const keyFilter = async (c: Call): Promise<{ accountId: string | undefined; apiKeyId: string | undefined }> => {
    const apiKey = param(c.req.query, 'apiKey', 64);
    if (apiKey !== undefined) {
      const key = await getKey(c.admin, apiKey);
      visible(self(c), key.accountId, `key ${apiKey}`);
      return { accountId: key.accountId, apiKeyId: key.id };
    }
    return { accountId: scope(self(c), param(c.req.query, 'accountId', 64), 'read'), apiKeyId: undefined };
  };
  add('GET', '/usage', async (c) => {
    const accountId = scope(self(c), param(c.req.query, 'accountId', 64), 'read');
    return reply(await usageSummary(c.admin, accountId, param(c.req.query, 'month', 7)));
  });
  add('GET', '/stats', async (c) => {
    const unit = param(c.req.query, 'unit', 4) ?? 'hour';
    if (unit !== 'hour' && unit !== 'day') throw new PalisadeError('INVALID_PARAMETER', 'unit is hour or day');
    const span = intParam(c.req.query, 'span', 1, unit === 'hour' ? 24 * 14 : 366) ?? (unit === 'hour' ? 24 : 30);
    const f = await keyFilter(c);
    return reply(await stats(c.admin, { ...(f.accountId ? { accountId: f.accountId } : {}), ...(f.apiKeyId ? { apiKeyId: f.apiKeyId } : {}), unit, span }));
  });
  add('GET', '/logs', async (c) => {
    const q = c.req.query;
    const f = await keyFilter(c);
    const status = param(q, 'status', 3);
    let statusMin: number | undefined;
    let statusMax: number | undefined;
    if (status !== undefined) {
      const m = /^([1-5])(\d\d|xx)$/.exec(status);
      if (m === null) throw new PalisadeError('INVALID_PARAMETER', 'status is a code (404) or a class (4xx)');
      statusMin = m[2] === 'xx' ? Number(m[1]) * 100 : Number(status);
      statusMax = m[2] === 'xx' ? statusMin + 99 : statusMin;
    }
    const before = param(q, 'before', 20);
    if (before !== undefined && !/^\d{1,18}$/.test(before)) throw new PalisadeError('INVALID_PARAMETER', 'before is a log id');
    const rows = await requestLogs(c.admin, {
      ...(f.accountId ? { accountId: f.accountId } : {}), ...(f.apiKeyId ? { apiKeyId: f.apiKeyId } : {}),
      statusMin, statusMax, pathPrefix: param(q, 'path', 200), since: dateParam(q, 'since'), until: dateParam(q, 'until'),
      before, limit: intParam(q, 'limit', 1, 1000) ?? 100,
    });
    const items = rows.map(logView);
    return reply({ items, next: items.length === 0 ? null : items[items.length - 1]!.id, ttlSeconds: config.REQUEST_LOGS_TTL / 1000 });
  });
  add('GET', '/audit', async (c) => {
    const accountId = scope(self(c), param(c.req.query, 'accountId', 64), 'read');
    const before = param(c.req.query, 'before', 20);
    if (before !== undefined && !/^\d{1,18}$/.test(before)) throw new PalisadeError('INVALID_PARAMETER', 'before is an audit entry id');
    const items = await auditLog(c.admin, { ...(accountId ? { accountId } : {}), ...(before ? { before } : {}), limit: intParam(c.req.query, 'limit', 1, 1000) ?? 100 });
    return reply({ items, next: items.length === 0 ? null : items[items.length - 1]!.id });
  });

  // --- training data and spam submissions
  add('GET', '/training', async (c) => {
    const account = await ownAccount(c, param(c.req.query, 'accountId', 64), 'read');
    return reply((await listTraining(c.admin, account.id, param(c.req.query, 'group', 64))).map(trainingView));
  });
  add('POST', '/training', async (c) => {
    const b = body(c);
    only(b, ['accountId', 'text', 'group', 'threshold', 'weight']);
    const account = await ownAccount(c, text(b, 'accountId', { max: 64, optional: true }), 'write');
    const example = await addTraining(c.admin, {
      accountId: account.id, text: text(b, 'text', { max: 10_000 }), group: text(b, 'group', { max: 64, optional: true }),
      threshold: num(b, 'threshold'), weight: num(b, 'weight'),
    });
    return reply(trainingView(example), 201);
  });
  add('DELETE', '/training/:id', async (c) => {
    const account = await ownAccount(c, param(c.req.query, 'accountId', 64), 'write');
    await removeTraining(c.admin, account.id, id(c), account.name);
    return reply({ id: id(c), removed: true });
  });
  add('GET', '/submissions', async (c) => {
    const accountId = scope(self(c), param(c.req.query, 'accountId', 64), 'read');
    return reply((await listSubmissions(c.admin, accountId, intParam(c.req.query, 'limit', 1, 1000))).map(submissionView));
  });
  add('POST', '/submissions/:id/promote', async (c) => {
    const s = await getSubmission(c.admin, id(c));
    visible(self(c), s.accountId, 'spam submission');
    needRole(self(c), 'write', s.accountId);
    const b = body(c);
    only(b, ['group', 'threshold', 'weight']);
    const example = await promoteSubmission(c.admin, s, { group: text(b, 'group', { max: 64, optional: true }), threshold: num(b, 'threshold'), weight: num(b, 'weight') });
    return reply(trainingView(example), 201);
  });

  // --- threat sources (root): what `npm run cli -- threats status` prints (docs/threats.md)
  add('GET', '/threats', async (c) => {
    needRole(self(c), 'root', null);
    return reply(threatsStatus(config).data);
  });

  // --- the effective configuration (root)
  add('GET', '/settings', async (c) => {
    needRole(self(c), 'root', null);
    return reply({ version: config.version, variables: redactedConfig(config) });
  });

}

/** The configuration with secrets hidden and credentials in URLs masked. */
export function redactedConfig(config: Config): Record<string, unknown> {
  const out = describeConfig(config);
  for (const [name, value] of Object.entries(out)) {
    if (typeof value === 'string') out[name] = value.replace(/\/\/[^/@\s]+@/g, '//***@');
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      // Parsed values (rate rules, CIDR lists): their source text is enough.
      const v = value as Record<string, unknown>;
      out[name] = typeof v.source === 'string' || Array.isArray(v.source) ? v.source : String(JSON.stringify(v)).slice(0, 500);
    }
  }
  return out;
}

