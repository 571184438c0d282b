/**
 * The dashboard overview's chart over a chosen range (imported history older than 30 days must be
 * viewable), per UTC day, week or month, on the real database; and the transcript's tenancy.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { getOverview, getTranscript } from '../../lib/dashboard/service';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine, type TestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
let a: TestAccount;
let b: TestAccount;
let convA: string;
before(async () => {
  server = await startTestServer();
  a = await createTestAccount('Overview A');
  b = await createTestAccount('Overview B');
  const [ca, cb] = await newChannelIds(2);
  const conv = conversationLine({ channel_id: ca!, created_at: '2024-01-03 08:00:00', updated_at: '2024-01-03 08:00:00' });
  convA = conv.conversation_id;
  await importLines(a.accountId, [
    conv,
    ...['2024-01-03 09:00:00', '2024-01-03 23:59:59', '2024-01-20 12:00:00', '2025-06-15 23:59:59', '2025-06-16 00:00:00'].map((created_at) =>
      responseLine(conv, { created_at }),
    ),
  ]);
  const other = conversationLine({ channel_id: cb!, created_at: '2024-01-03 08:00:00', updated_at: '2024-01-03 08:00:00' });
  await importLines(b.accountId, [
    other,
    responseLine(other, { created_at: '2024-01-03 10:00:00' }),
    responseLine(other, { created_at: '2024-01-04 10:00:00' }),
  ]);
});
after(async () => {
  await server?.close();
});

const sum = (xs: Array<{ responses: number }>) => xs.reduce((n, x) => n + x.responses, 0);

test('a from–to range per UTC day, zero-filled, counting only the account’s responses', async () => {
  const o = await getOverview(a.accountId, { from: '2024-01-01', to: '2024-01-31' });
  assert.equal(o.range.bucket, 'day');
  assert.equal(o.perBucket.length, 31);
  assert.equal(o.perBucket[0]!.day, '2024-01-01');
  assert.equal(o.perBucket.at(-1)!.day, '2024-01-31');
  assert.deepEqual(
    o.perBucket.filter((d) => d.responses > 0),
    [
      { day: '2024-01-03', responses: 2 },
      { day: '2024-01-20', responses: 1 },
    ],
  );
  assert.deepEqual(o.span, { first: '2024-01-03', last: '2025-06-16' });
  const edge = await getOverview(a.accountId, { from: '2025-06-15', to: '2025-06-16' });
  assert.deepEqual(Array.from(edge.perBucket), [
    { day: '2025-06-15', responses: 1 },
    { day: '2025-06-16', responses: 1 },
  ]);
});

test('long ranges are drawn per week (Mondays) or month, and "all" starts at the first response', async () => {
  const weeks = await getOverview(a.accountId, { from: '2024-01-01', to: '2025-12-31' });
  assert.equal(weeks.range.bucket, 'week');
  assert.equal(sum(weeks.perBucket), 5);
  for (const w of weeks.perBucket) assert.equal(new Date(`${w.day}T00:00:00Z`).getUTCDay(), 1, w.day);
  const all = await getOverview(a.accountId, { range: 'all' });
  assert.equal(all.range.key, 'all');
  assert.equal(all.range.from, '2024-01-03');
  assert.equal(all.range.bucket, 'month');
  assert.deepEqual(Array.from(all.perBucket).slice(0, 2), [
    { day: '2024-01-01', responses: 3 },
    { day: '2024-02-01', responses: 0 },
  ]);
  assert.equal(sum(all.perBucket), 5);
  // the default (last 30 days) has none of this history, and says where it is instead
  const recent = await getOverview(a.accountId, {});
  assert.equal(recent.range.key, '30');
  assert.equal(recent.perBucket.length, 30);
  assert.equal(sum(recent.perBucket), 0);
  const none = await getOverview(b.accountId, { from: '2025-01-01', to: '2025-01-02' });
  assert.equal(sum(none.perBucket), 0);
});

test('a transcript is only found in its own account', async () => {
  assert.equal((await getTranscript(a.accountId, convA))?.messages.length, 10);
  assert.equal(await getTranscript(b.accountId, convA), null);
  assert.equal(await getTranscript(a.accountId, 'not-a-uuid'), null);
});
