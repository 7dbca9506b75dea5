// training_data and spam_submissions (migration 004) on the embedded PGlite and the real PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccount, ensureDefaultAccount } from '../../src/db/accounts.js';
import {
  deleteOldSpamSubmissions, getSpamSubmission, insertSpamSubmissions, listSpamSubmissions, type NewSpamSubmission,
} from '../../src/db/spam-submissions.js';
import { addTrainingExample, listTrainingData, removeTrainingExample, TRAINING_LIMITS } from '../../src/db/training-data.js';
import { openTestDatabase, DB_KINDS, dbAvailability, type TestDatabase } from '../helpers/db.js';

const available = await dbAvailability();

const submission = (accountId: string, over: Partial<NewSpamSubmission> = {}): NewSpamSubmission => ({
  accountId, apiKeyId: 'key_x', source: 'classifier', score: 7.5, reasons: ['PHARMACY', 'LINKS'], text: 'buy pills',
  textHash: 'ab'.repeat(32), fields: ['name', 'message'], emailDomain: 'spam.example', ip: '192.0.2.0', country: 'DE', ...over,
});

for (const kind of DB_KINDS) {
  describe(`classifier data on ${kind}`, () => {
    let t: TestDatabase | null = null;
    let accountId = '';
    let otherId = '';
    before(async () => {
      if (!available[kind]) return;
      t = await openTestDatabase(kind);
      accountId = (await ensureDefaultAccount(t!.db.sql, 'Default Account')).id;
      otherId = (await createAccount(t!.db.sql, 'Other')).id;
    });
    after(async () => { await t?.close(); });
    const sql = () => t!.db.sql;
    const it = (name: string, fn: () => Promise<void>) => test(name, { skip: available[kind] ? false : `${kind} unreachable` }, fn);

    it('training examples are added with defaults, listed per account and group, and removed only by their account', async () => {
      const a = await addTrainingExample(sql(), { accountId, text: 'cheap replica watches', source: 'cli' });
      assert.match(a.id, /^trn_[0-9A-Za-z]{16}$/);
      assert.deepEqual([a.group, a.threshold, a.weight, a.source], ['default', 0.7, 1, 'cli']);
      // Listed by creation time: some engines keep milliseconds, so the second is made a little later.
      await new Promise((r) => setTimeout(r, 5));
      const b = await addTrainingExample(sql(), { accountId, group: 'seo', text: 'guest post offer', threshold: 0.5, weight: 2 });
      await addTrainingExample(sql(), { accountId: otherId, text: 'not yours' });
      assert.deepEqual((await listTrainingData(sql(), accountId)).map((e) => e.id), [a.id, b.id]);
      assert.deepEqual((await listTrainingData(sql(), accountId, 'seo')).map((e) => [e.text, e.threshold, e.weight]), [['guest post offer', 0.5, 2]]);
      assert.equal(await removeTrainingExample(sql(), otherId, a.id), false);
      assert.equal(await removeTrainingExample(sql(), accountId, a.id), true);
      assert.equal(await removeTrainingExample(sql(), accountId, a.id), false);
      assert.deepEqual((await listTrainingData(sql(), accountId)).map((e) => e.id), [b.id]);
    });

    it('bad training examples are refused naming the field', async () => {
      await assert.rejects(addTrainingExample(sql(), { accountId, text: '   ' }), { name: 'RangeError', message: /text must be a non-empty/ });
      await assert.rejects(addTrainingExample(sql(), { accountId, text: 'x'.repeat(TRAINING_LIMITS.maxTextLength + 1) }), { message: /at most 10000/ });
      await assert.rejects(addTrainingExample(sql(), { accountId, text: 'x', threshold: 0 }), { message: /threshold/ });
      await assert.rejects(addTrainingExample(sql(), { accountId, text: 'x', threshold: Number.NaN }), { message: /threshold/ });
      await assert.rejects(addTrainingExample(sql(), { accountId, text: 'x', weight: 11 }), { message: /weight/ });
      await assert.rejects(addTrainingExample(sql(), { accountId, text: 'x', group: 'Bad Group' }), { message: /group/ });
    });

    it('spam submissions are written in one batch, listed newest first per account, and deleted past their age', async () => {
      const now = Date.now();
      await insertSpamSubmissions(sql(), [
        submission(accountId, { time: new Date(now - 20 * 86_400_000), text: 'old' }),
        submission(accountId, { time: new Date(now - 60_000), text: null }),
        submission(otherId, { time: new Date(now - 1000) }),
      ]);
      const mine = await listSpamSubmissions(sql(), { accountId });
      assert.deepEqual(mine.map((s) => s.text), [null, 'old']);
      assert.deepEqual(mine[0]!.reasons, ['PHARMACY', 'LINKS']);
      assert.deepEqual(mine[0]!.fields, ['name', 'message']);
      assert.equal(mine[0]!.score, 7.5);
      assert.match(mine[0]!.id, /^sub_/);
      assert.equal((await getSpamSubmission(sql(), mine[1]!.id))?.text, 'old');
      assert.equal(await getSpamSubmission(sql(), 'sub_missing'), null);
      assert.equal((await listSpamSubmissions(sql(), { limit: 2 })).length, 2);
      assert.equal(await deleteOldSpamSubmissions(sql(), 14 * 86_400_000, now), 1);
      assert.deepEqual((await listSpamSubmissions(sql(), { accountId })).map((s) => s.text), [null]);
      assert.equal(await deleteOldSpamSubmissions(sql(), 14 * 86_400_000, now), 0);
    });
  });
}
