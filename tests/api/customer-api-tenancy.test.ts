/** Customer API v2 tenant isolation: no operation ever shows another account's records. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine, type ResponseLine } from '../helpers/builders';
import { assertEnvelope, assertProblem, ids, ts, V2, walkPages, type Rec } from '../helpers/api-fixtures';
import { startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

/** An account whose records look like every other tenant's: same titles, texts, times and counts. */
async function tenant(name: string) {
  const acct = await createTestAccount(name);
  const [c1, c2] = (await newChannelIds(2)) as [number, number];
  const convs = [c1, c1, c2].map((ch, i) =>
    conversationLine({
      channel_id: ch,
      channel_name: 'Shared channel name',
      title: `Shared title ${i}`,
      created_at: ts(i),
    }),
  );
  const responses: ResponseLine[] = [];
  convs.forEach((c, i) => {
    for (let j = 0; j < 3; j++) {
      responses.push(responseLine(c, { question: `shared question ${i}.${j}`, answer: 'shared answer', created_at: ts(10 + j), likes: j }));
    }
  });
  await importLines(acct.accountId, [...convs, ...responses]);
  return { acct, channels: [c1, c2], convs, responses, get: api(server.url, acct.key) };
}

describe('tenant isolation', () => {
  it("lists only the caller's records, whatever filters, queries and orders are given", async (t) => {
    const a = await tenant('Tenant A');
    const b = await tenant('Tenant B');
    const [a1, a2] = a.channels as [number, number];
    const [b1, b2] = b.channels as [number, number];
    const bConv = b.convs[0]!.conversation_id;
    const aConv = a.convs[0]!.conversation_id;
    const bIds = new Set([...b.convs.map((c) => c.conversation_id), ...b.responses.map((r) => r.response_id)]);
    const aResponses = (pred: (r: ResponseLine) => boolean = () => true) =>
      a.responses
        .filter(pred)
        .map((r) => r.response_id)
        .sort();
    const aConvs = (channels?: number[]) =>
      a.convs
        .filter((c) => !channels || channels.includes(c.channel_id))
        .map((c) => c.conversation_id)
        .sort();

    const cases: Array<{ path: string; want: string[] }> = [
      { path: '/response', want: aResponses() },
      { path: '/response?query=shared', want: aResponses() },
      { path: '/response?query=SHARED%20ANSWER&order_by=likes', want: aResponses() },
      { path: `/response?channel_id=${b1}`, want: [] },
      { path: `/response?channel_ids[]=${b1}&channel_ids[]=${b2}`, want: [] },
      { path: `/response?channel_id=${a1}&channel_ids[]=${b1}`, want: aResponses((r) => r.channel_id === a1) },
      { path: `/response?channel_ids%5B%5D=${b2}&channel_ids%5B%5D=${a2}&query=question`, want: aResponses((r) => r.channel_id === a2) },
      { path: `/response?conversation_id=${bConv}`, want: [] },
      { path: `/response?conversation_id=${bConv}&channel_id=${b1}`, want: [] },
      { path: `/response?conversation_id=${bConv}&query=shared`, want: [] },
      { path: `/response?conversation_id=${aConv}&channel_id=${b1}`, want: [] },
      { path: `/response?conversation_id=${aConv}`, want: aResponses((r) => r.conversation_id === aConv) },
      { path: '/response?order_by=conversation_id&sort=ASC&format=gridjs', want: aResponses() },
      { path: '/conversation', want: aConvs() },
      { path: '/conversation?query=shared', want: aConvs() },
      { path: '/conversation?query=Shared%20channel', want: aConvs() },
      { path: `/conversation?channel_id=${b1}`, want: [] },
      { path: `/conversation?channel_ids[]=${b1}&channel_ids[]=${b2}&query=shared`, want: [] },
      { path: `/conversation?channel_id=${b2}&channel_ids[]=${a2}`, want: aConvs([a2]) },
      { path: '/conversation?order_by=response_count&sort=asc&format=gridjs', want: aConvs() },
      { path: '/conversation?order_by=channel_id', want: aConvs() },
    ];
    for (const c of cases) {
      await t.test(c.path, async () => {
        const sep = c.path.includes('?') ? '&' : '?';
        const walked = await walkPages(a.get, `${V2}${c.path}${sep}resultsPerPage=4`);
        const seen = ids(walked.records);
        assert.deepEqual(
          seen.filter((id) => bIds.has(id)),
          [],
          'no record of the other account',
        );
        assert.deepEqual([...seen].sort(), c.want);
        assert.ok(
          walked.counts.every((n) => n === c.want.length),
          `count ${walked.counts} should be ${c.want.length}`,
        );
        for (const r of walked.records as Rec[]) {
          if ('account_id' in r) assert.equal(Number(r.account_id), a.acct.accountId);
        }
      });
    }
  });

  it('answers 404 for every single record of the other account, and 200 for its own', async () => {
    const a = await tenant('Tenant A');
    const b = await tenant('Tenant B');
    for (const [reader, owner] of [
      [a, b],
      [b, a],
    ] as const) {
      for (const c of owner.convs) {
        assertProblem(await reader.get(`${V2}/conversation/${c.conversation_id}`), 404);
        assertProblem(await reader.get(`${V2}/conversation/${c.conversation_id}?format=gridjs`), 404);
        const own = await owner.get(`${V2}/conversation/${c.conversation_id}`);
        assert.equal(own.status, 200);
        assert.equal(own.body.account_id, owner.acct.accountId);
        assert.deepEqual(
          own.body.messages.map((m: { response_id: string }) => m.response_id).filter((id: string) => !owner.responses.some((r) => r.response_id === id)),
          [],
        );
      }
      for (const r of owner.responses) {
        assertProblem(await reader.get(`${V2}/response/${r.response_id}`), 404);
        assert.equal((await owner.get(`${V2}/response/${r.response_id}`)).status, 200);
      }
    }
  });

  it('keeps counts per account when both accounts use the same filters', async () => {
    const a = await tenant('Tenant A');
    const b = await tenant('Tenant B');
    // B grows; A's counts must not move.
    const extra = responseLine(b.convs[0]!, { question: 'shared extra' });
    await importLines(b.acct.accountId, [extra]);
    for (const [who, responses, convs] of [
      [a, 9, 3],
      [b, 10, 3],
    ] as const) {
      assert.equal(assertEnvelope(await who.get(`${V2}/response`)).count, responses);
      assert.equal(assertEnvelope(await who.get(`${V2}/response?query=shared`)).count, responses);
      assert.equal(assertEnvelope(await who.get(`${V2}/conversation`)).count, convs);
      assert.equal(assertEnvelope(await who.get(`${V2}/response?channel_id=${a.channels[0]}&channel_ids[]=${b.channels[0]}`)).count, who === a ? 6 : 7);
    }
  });
});
