/**
 * GET /customer-api/v2/insights and the /insights page on a hand-built history: every figure is
 * computed here from the history's plain description and compared with the API and the page.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb } from '../../db/client';
import { figuresOf } from '../../lib/dashboard/insights';
import { answerContentGap, dismissContentGap, listContentGaps, parseGapQuestions } from '../../lib/insights/gaps';
import { answerEngine } from '../../lib/answers/engines';
import { AppError } from '../../lib/core/errors';
import type { InsightsRecord } from '../../lib/insights/contract';
import { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine, type TestAccount } from '../helpers/builders';
import { assertParamError, assertUnauthorized, V2, type Get } from '../helpers/api-fixtures';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn } from '../helpers/signin';

let server: TestServer;
let acct: TestAccount;
let get: Get;
let cookie: string;
let ch1: number;
let ch2: number;
const conversationIds: string[] = [];

type R = { likes?: number; dislikes?: number; declined?: boolean; question?: string; at: string };
/** One conversation of the history: what insights read, nothing else. Times are UTC. */
type C = {
  channel: () => number;
  created: string;
  status: string;
  handledBy?: 'ai' | 'human';
  handedOff?: string;
  firstReply?: string;
  resolved?: string;
  csat?: number;
  busyNow?: boolean;
  responses: R[];
};

const D1 = '2026-03-01';
const D2 = '2026-03-02';
const HISTORY: C[] = [
  // AI-resolved: closed, nobody involved, liked.
  { channel: () => ch1, created: `${D1} 10:00:00`, status: 'Resolved', resolved: `${D1} 10:10:00`, csat: 5, responses: [{ likes: 1, at: `${D1} 10:01:00` }] },
  // Idle 30 minutes but an answer was disliked: not AI-resolved.
  { channel: () => ch1, created: `${D1} 11:00:00`, status: 'Open', responses: [{ dislikes: 1, at: `${D1} 11:01:00` }] },
  // Declined, handed off, answered in 2 minutes, resolved after 30 minutes, rated 3.
  {
    channel: () => ch2,
    created: `${D1} 12:00:00`,
    status: 'Resolved',
    handledBy: 'human',
    handedOff: `${D1} 12:01:00`,
    firstReply: `${D1} 12:03:00`,
    resolved: `${D1} 12:30:00`,
    csat: 3,
    responses: [{ declined: true, at: `${D1} 12:00:30` }],
  },
  // Two declined answers, handed off, first reply after 6 minutes, still open.
  {
    channel: () => ch2,
    created: `${D2} 09:00:00`,
    status: 'Open',
    handledBy: 'human',
    handedOff: `${D2} 09:02:00`,
    firstReply: `${D2} 09:08:00`,
    responses: [
      { declined: true, at: `${D2} 09:00:30` },
      { declined: true, at: `${D2} 09:01:00` },
    ],
  },
  { channel: () => ch1, created: `${D2} 10:00:00`, status: 'Resolved', resolved: `${D2} 10:20:00`, csat: 4, responses: [{ likes: 2, at: `${D2} 10:01:00` }] },
  // An imported closed status without a resolution time: AI-resolved, its time to resolve unknown.
  { channel: () => ch1, created: `${D2} 13:00:00`, status: 'Closed', csat: 2, responses: [{ at: `${D2} 13:01:00` }] },
  // Handed off, handed back to the AI before anyone replied, then resolved after an hour: a person was involved.
  {
    channel: () => ch1,
    created: `${D2} 14:00:00`,
    status: 'Resolved',
    handedOff: `${D2} 14:05:00`,
    resolved: `${D2} 15:00:00`,
    csat: 5,
    responses: [{ likes: 1, dislikes: 1, at: `${D2} 14:01:00` }],
  },
  // AI-resolved and confirmed: the visitor thanked after an answer (the thanks itself was declined).
  {
    channel: () => ch2,
    created: `${D1} 15:00:00`,
    status: 'Resolved',
    resolved: `${D1} 15:05:00`,
    responses: [{ at: `${D1} 15:01:00` }, { question: 'Great, thanks!', declined: true, at: `${D1} 15:02:00` }],
  },
  // Idle, thanked only after a declined answer (the thanks got an answer itself): AI involved, AI-resolved assumed.
  {
    channel: () => ch1,
    created: `${D2} 16:00:00`,
    status: 'Open',
    responses: [
      { declined: true, at: `${D2} 16:01:00` },
      { question: 'ok thank you', at: `${D2} 16:02:00` },
    ],
  },
  // Idle, a short reply with a negation and a question after an answer: assumed. Then one that only got a declined answer: not AI involved.
  {
    channel: () => ch1,
    created: `${D2} 17:00:00`,
    status: 'Open',
    responses: [{ at: `${D2} 17:01:00` }, { question: "Thanks, but that's not it?", at: `${D2} 17:02:00` }],
  },
  {
    channel: () => ch1,
    created: `${D1} 18:00:00`,
    status: 'Resolved',
    resolved: `${D1} 18:02:00`,
    responses: [{ declined: true, question: 'Thanks!', at: `${D1} 18:01:00` }],
  },
  // Active right now: not idle, so not (yet) AI-resolved.
  { channel: () => ch1, created: `${D2} 20:00:00`, status: 'Open', busyNow: true, responses: [{ at: `${D2} 20:01:00` }] },
  // Outside the window (the day before, and a response of the window's conversation the day after).
  {
    channel: () => ch1,
    created: '2026-02-28 23:59:59',
    status: 'Resolved',
    resolved: `${D1} 00:30:00`,
    csat: 1,
    responses: [{ declined: true, likes: 3, at: '2026-02-28 23:59:59' }],
  },
];

const secs = (a: string, b: string) => (Date.parse(`${b.replace(' ', 'T')}Z`) - Date.parse(`${a.replace(' ', 'T')}Z`)) / 1000;
const median = (xs: number[]) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return Math.round(s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2);
};
/** The "thanked" rule of docs/decisions/insights.md, as plain JavaScript. */
const THANKS =
  /\b(thanks?|thank (you|u)|thx|thnx|tysm|ty|cheers|appreciated?|perfect|great|awesome|excellent|brilliant|wonderful|fantastic|amazing|helpful|got it|that help(s|ed)|(that|it) work(s|ed)|that did it|solved|sorted|all good|all set|bye|goodbye)\b/i;
const NOT_THANKS = /\?|\b(not|no|nope|never|but|still|however|wrong|useless|unhelpful)\b|n['’]t\b/i;
const thanked = (c: C) =>
  c.responses.some((t) => {
    const q = t.question ?? 'A question?';
    return q.length <= 80 && THANKS.test(q) && !NOT_THANKS.test(q) && c.responses.some((a) => !a.declined && a.at < t.at);
  });
const share = (a: number, b: number) => (b === 0 ? 0 : Math.round((a / b) * 10_000) / 10_000);
const csatOf = (cs: C[]) => {
  const r = cs.filter((c) => c.csat !== undefined).map((c) => c.csat!);
  return {
    responses: r.length,
    mean: r.length ? Math.round((r.reduce((a, b) => a + b, 0) / r.length) * 100) / 100 : null,
    share_4_5: r.length ? share(r.filter((x) => x >= 4).length, r.length) : null,
  };
};

/** The contract's figures, from the history's description (docs/contracts.md §15, docs/decisions/insights.md). */
function expected(from: string, to: string, channel: number | null): InsightsRecord {
  const inDay = (ts: string) => ts.slice(0, 10) >= from && ts.slice(0, 10) <= to;
  const cs = HISTORY.filter((c) => inDay(c.created) && (channel === null || c.channel() === channel));
  const rs = HISTORY.filter((c) => channel === null || c.channel() === channel).flatMap((c) => c.responses.filter((r) => inDay(r.at)));
  const person = (c: C) => c.handedOff !== undefined || c.handledBy === 'human';
  const closed = (c: C) => !['Open', 'Waiting', 'Snoozed'].includes(c.status);
  const aiResolved = cs.filter((c) => !person(c) && (closed(c) || !c.busyNow) && !c.responses.some((r) => (r.dislikes ?? 0) > 0));
  const handoffs = cs.filter(person);
  const confirmed = aiResolved.filter((c) => c.responses.some((r) => (r.likes ?? 0) > 0) || (c.csat ?? 0) >= 4 || thanked(c));
  const days: string[] = [];
  for (let d = from; d <= to; d = new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)) days.push(d);
  return {
    from,
    to,
    channel_id: channel,
    conversations: cs.length,
    ai_resolved: aiResolved.length,
    ai_resolved_share: share(aiResolved.length, cs.length),
    ai_involved: cs.filter((c) => c.responses.some((r) => !r.declined)).length,
    ai_resolved_confirmed: confirmed.length,
    ai_resolved_assumed: aiResolved.length - confirmed.length,
    handoffs: handoffs.length,
    handoff_rate: share(handoffs.length, cs.length),
    median_first_response_seconds: median(cs.filter((c) => c.handedOff && c.firstReply).map((c) => secs(c.handedOff!, c.firstReply!))),
    median_resolution_seconds: median(cs.filter((c) => closed(c) && c.resolved).map((c) => secs(c.created, c.resolved!))),
    csat: { ai: csatOf(cs.filter((c) => !person(c))), human: csatOf(cs.filter(person)) },
    declined_answers: rs.filter((r) => r.declined).length,
    likes: rs.reduce((n, r) => n + (r.likes ?? 0), 0),
    dislikes: rs.reduce((n, r) => n + (r.dislikes ?? 0), 0),
    series: days.map((date) => ({
      date,
      conversations: cs.filter((c) => c.created.startsWith(date)).length,
      handoffs: handoffs.filter((c) => c.created.startsWith(date)).length,
      declined_answers: rs.filter((r) => r.declined && r.at.startsWith(date)).length,
    })),
  };
}

before(async () => {
  server = await startTestServer();
  acct = await createTestAccount('Insights Co');
  [ch1, ch2] = (await newChannelIds(2)) as [number, number];
  const lines: object[] = [];
  const db = await getDb();
  const later: Array<() => Promise<unknown>> = [];
  for (const c of HISTORY) {
    const conv = conversationLine({
      channel_id: c.channel(),
      created_at: c.created,
      updated_at: c.responses.at(-1)?.at ?? c.created,
      status: c.status,
      ...(c.handledBy ? { handled_by: c.handledBy } : {}),
      ...(c.resolved ? { resolved_at: c.resolved } : {}),
      ...(c.csat ? { csat: c.csat } : {}),
    } as Parameters<typeof conversationLine>[0]);
    lines.push(conv);
    conversationIds.push(conv.conversation_id);
    for (const r of c.responses) {
      const line = responseLine(conv, { created_at: r.at, likes: r.likes ?? 0, dislikes: r.dislikes ?? 0, ...(r.question ? { question: r.question } : {}) });
      lines.push(line);
      if (r.declined) later.push(() => db.execute(sql`UPDATE responses SET declined = true WHERE id = ${line.response_id}`));
    }
    // What an import cannot carry: the handoff's times (set by the handoff service in production) and "active now".
    later.push(() =>
      db.execute(sql`UPDATE conversations SET handed_off_at = ${c.handedOff ?? null}::timestamp AT TIME ZONE 'UTC',
        first_reply_at = ${c.firstReply ?? null}::timestamp AT TIME ZONE 'UTC'
        ${c.busyNow ? sql`, updated_at = now()` : sql``} WHERE id = ${conv.conversation_id}`),
    );
  }
  const result = await importLines(acct.accountId, lines);
  assert.equal(result.conversations, HISTORY.length);
  for (const step of later) await step();
  // Another account's history on the same days stays out.
  const other = await createTestAccount('Other Co');
  const [och] = await newChannelIds(1);
  const oc = conversationLine({ channel_id: och!, created_at: `${D1} 10:00:00`, updated_at: `${D1} 10:00:00`, status: 'Resolved' });
  await importLines(other.accountId, [oc, responseLine(oc, { created_at: `${D1} 10:00:00`, likes: 5 })]);
  get = api(server.url, acct.key);
  const s = await signIn(server.url, acct.email, acct.password);
  assert.ok(s.ok, `sign-in: ${s.error}`);
  cookie = s.cookie!;
});
after(async () => {
  await server?.close();
});

/** The value the page writes for each figure (`data-figure` elements). */
async function pageFigures(query: string): Promise<Record<string, string>> {
  const res = await fetch(`${server.url}/insights?${query}`, { headers: { cookie }, redirect: 'manual' });
  assert.equal(res.status, 200);
  const html = await res.text();
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/data-figure="([a-z_0-9]+)">([^<]*)</g)) out[m[1]!] = m[2]!.replaceAll('&amp;', '&');
  return out;
}

describe('insights on a hand-built history', () => {
  const windows: Array<[string, string, string, () => number | null]> = [
    ['both days, every channel', D1, D2, () => null],
    ['the first day', D1, D1, () => null],
    ['both days, channel 2', D1, D2, () => ch2],
    ['both days, channel 1', D1, D2, () => ch1],
    ['a window before any conversation', '2025-01-01', '2025-01-03', () => null],
    ['the day before through the first day', '2026-02-28', D1, () => null],
  ];
  for (const [name, from, to, channel] of windows) {
    it(`${name}: the API equals the figures computed from the history, and so does the page`, async () => {
      const ch = channel();
      const q = `from=${from}&to=${to}${ch === null ? '' : `&channel_id=${ch}`}`;
      const want = expected(from, to, ch);
      const res = await get(`${V2}/insights?${q}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, want);
      const shown = await pageFigures(q);
      for (const f of figuresOf(want, [])) assert.equal(shown[f.key], f.value, `${name}: the page's ${f.title}`);
    });
  }

  it('the history exercises every figure (no figure is trivially zero or null)', () => {
    const all = expected(D1, D2, null);
    assert.deepEqual(
      {
        conversations: all.conversations,
        ai_resolved: all.ai_resolved,
        ai_involved: all.ai_involved,
        confirmed: all.ai_resolved_confirmed,
        assumed: all.ai_resolved_assumed,
        handoffs: all.handoffs,
        first: all.median_first_response_seconds,
        resolution: all.median_resolution_seconds,
        declined: all.declined_answers,
        likes: all.likes,
        dislikes: all.dislikes,
      },
      {
        conversations: 12,
        ai_resolved: 7,
        ai_involved: 9,
        confirmed: 3,
        assumed: 4,
        handoffs: 3,
        first: 240,
        resolution: 900,
        declined: 6,
        likes: 4,
        dislikes: 2,
      },
    );
    assert.deepEqual(all.csat, { ai: { responses: 3, mean: 3.67, share_4_5: 0.6667 }, human: { responses: 2, mean: 4, share_4_5: 0.5 } });
  });
});

describe('the Declined badge', () => {
  it('marks exactly the declined answers of a transcript', async () => {
    for (const [i, c] of HISTORY.entries()) {
      const res = await fetch(`${server.url}/conversations/${conversationIds[i]}`, { headers: { cookie } });
      assert.equal(res.status, 200);
      const badges = (await res.text()).match(/class="badge declined">Declined</g) ?? [];
      assert.equal(badges.length, c.responses.filter((r) => r.declined).length, `conversation ${i}`);
    }
  });
});

describe('content gaps: failed questions grouped by what was asked', () => {
  // Real paraphrases (several visitors, their own words), each a conversation of its own.
  const RETURNS = ['Can I return a used item?', 'How do I return an item I have already used?', 'return policy for used items', 'Returning used items'];
  const CANADA = ['Do you ship to Canada?', 'shipping to canada?', 'Can you ship my order to Canada?'];
  const ALONE = 'Is the café open on Sundays?';
  let gapsAcct: TestAccount;
  before(async () => {
    gapsAcct = await createTestAccount('Gaps Co');
    const [ch] = (await newChannelIds(1)) as [number];
    const db = await getDb();
    const lines: object[] = [];
    const declined: string[] = [];
    const ask = (question: string, at: string, over: Partial<Parameters<typeof responseLine>[1]> = {}) => {
      const conv = conversationLine({ channel_id: ch, created_at: at, updated_at: at });
      const r = responseLine(conv, { question, created_at: at, ...over });
      lines.push(conv, r);
      return { conv, r };
    };
    for (const [i, q] of RETURNS.entries()) declined.push(ask(q, `${D1} 0${i}:00:00`).r.response_id);
    for (const [i, q] of CANADA.slice(0, 2).entries()) declined.push(ask(q, `${D1} 1${i}:00:00`).r.response_id);
    // The third Canada visitor got an answer, disliked it and asked for a person, who replied.
    const handed = ask(CANADA[2]!, `${D2} 09:00:00`, { dislikes: 1 });
    declined.push(ask(ALONE, `${D2} 10:00:00`).r.response_id);
    await importLines(gapsAcct.accountId, lines);
    for (const id of declined) await db.execute(sql`UPDATE responses SET declined = true WHERE id = ${id}`);
    await db.execute(
      sql`UPDATE conversations SET handed_off_at = ${`${D2} 09:01:00+00`}::timestamptz, handled_by = 'human' WHERE id = ${handed.conv.conversation_id}`,
    );
    await db.execute(sql`INSERT INTO conversation_messages (id, account_id, conversation_id, author, author_name, text, created_at)
      VALUES (gen_random_uuid(), ${gapsAcct.accountId}, ${handed.conv.conversation_id}, 'agent', 'Sam', 'Yes: we ship to Canada in 5–7 days.', ${`${D2} 09:03:00+00`}::timestamptz)`);
  });

  it('groups paraphrases, keeps a different question alone, ranks by conversations, offers the member reply as the draft', async () => {
    const groups = await listContentGaps(gapsAcct.accountId, { from: D1, to: D2 });
    assert.deepEqual(
      groups.map((g) => ({ n: g.conversations, questions: g.questions.map((q) => q.text).sort(), reasons: g.reasons, draft: g.draft })),
      [
        { n: 4, questions: [...RETURNS].sort(), reasons: { declined: 4, disliked: 0, handed_off: 0 }, draft: null },
        // The handed-off conversation counts once although its question is there twice (disliked, then handed off).
        { n: 3, questions: [...CANADA].sort(), reasons: { declined: 2, disliked: 1, handed_off: 1 }, draft: 'Yes: we ship to Canada in 5–7 days.' },
        { n: 1, questions: [ALONE], reasons: { declined: 1, disliked: 0, handed_off: 0 }, draft: null },
      ],
    );
    const s = await signIn(server.url, gapsAcct.email, gapsAcct.password);
    const html = await (await fetch(`${server.url}/insights/gaps?from=${D1}&to=${D2}`, { headers: { cookie: s.cookie! } })).text();
    const headings = [...html.matchAll(/<li class="panel"><h2>([^<]*)<\/h2>/g)].map((m) => m[1]);
    assert.deepEqual(
      headings,
      groups.map((g) => g.question.replaceAll("'", '&#x27;')),
    );
    assert.match(html, /4 conversations/);
  });

  it('the page shows the 100 groups with the most conversations and says how many there are', async () => {
    const many = await createTestAccount('Many Gaps Co');
    const [ch] = (await newChannelIds(1)) as [number];
    const lines: object[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 101; i++) {
      const at = `${D1} 12:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}`;
      const conv = conversationLine({ channel_id: ch, created_at: at, updated_at: at });
      const r = responseLine(conv, { question: `Do you stock ${['alpha', 'bravo', 'charlie', 'delta'][i % 4]}${i}x${i} widgets?`, created_at: at });
      lines.push(conv, r);
      ids.push(r.response_id);
    }
    await importLines(many.accountId, lines);
    await (await getDb()).execute(sql`UPDATE responses SET declined = true WHERE account_id = ${many.accountId}`);
    const s = await signIn(server.url, many.email, many.password);
    const html = await (await fetch(`${server.url}/insights/gaps?from=${D1}&to=${D1}`, { headers: { cookie: s.cookie! } })).text();
    assert.equal([...html.matchAll(/<li class="panel"><h2>/g)].length, 100);
    assert.match(html.replaceAll('<!-- -->', ''), /101 failed questions: the 100 groups with the most conversations of 101\./);
  });

  it('"Save answer" makes a curated entry the bot answers paraphrases with; the group leaves the gaps; "Dismiss" hides a group', async () => {
    const ask = async (question: string) => {
      const answer = await answerEngine().answer({
        accountId: gapsAcct.accountId,
        conversationId: randomUUID(),
        question,
        signal: new AbortController().signal,
      });
      let text = '';
      for await (const d of answer.deltas) text += d;
      return { text, declined: answer.declined };
    };
    assert.equal((await ask('Do you deliver orders to Canada?')).declined, true);
    const canada = (await listContentGaps(gapsAcct.accountId, { from: D1, to: D2 }))[1]!;
    await answerContentGap(gapsAcct.accountId, { questions: canada.questions.map((q) => q.text), answer: canada.draft! });
    for (const paraphrase of ['Do you deliver orders to Canada?', 'shipping to canada', 'Can I get my package shipped to Canada?'])
      assert.deepEqual(await ask(paraphrase), { text: 'Yes: we ship to Canada in 5–7 days.', declined: false }, paraphrase);
    assert.equal((await ask('Can I return a used item?')).declined, true, 'another question is not answered with it');
    await dismissContentGap(gapsAcct.accountId, RETURNS);
    assert.deepEqual(
      (await listContentGaps(gapsAcct.accountId, { from: D1, to: D2 })).map((g) => g.question),
      [ALONE],
    );
  });

  const bad: Array<[string, () => unknown]> = [
    ['questions not JSON', () => parseGapQuestions('not json')],
    ['questions empty', () => parseGapQuestions('[]')],
    ['questions not strings', () => parseGapQuestions('[1]')],
    ['answer empty', () => answerContentGap(gapsAcct.accountId, { questions: ['q?'], answer: '  ' })],
    ['only blank questions', () => answerContentGap(gapsAcct.accountId, { questions: [' '], answer: 'A.' })],
    ['answer too long', () => answerContentGap(gapsAcct.accountId, { questions: ['q?'], answer: 'x'.repeat(8_001) })],
  ];
  for (const [name, run] of bad) {
    it(`refused: ${name}`, async () => {
      await assert.rejects(
        async () => run(),
        (e) => e instanceof AppError && e.code === 'invalid_request',
      );
    });
  }
});

describe('insights: bad requests', () => {
  const cases: Array<[string, string, string]> = [
    ['from missing', 'to=2026-03-02', 'from'],
    ['to missing', 'from=2026-03-01', 'to'],
    ['not a date', 'from=2026-3-1&to=2026-03-02', 'from'],
    ['no such day', 'from=2026-02-30&to=2026-03-02', 'from'],
    ['to before from', 'from=2026-03-02&to=2026-03-01', 'to'],
    ['more than 366 days', 'from=2025-01-01&to=2026-01-02', 'to'],
    ['channel not a number', 'from=2026-03-01&to=2026-03-02&channel_id=abc', 'channel_id'],
    ['channel zero', 'from=2026-03-01&to=2026-03-02&channel_id=0', 'channel_id'],
  ];
  for (const [name, q, param] of cases) {
    it(`${name}: 400 naming ${param}`, async () => {
      assertParamError(await get(`${V2}/insights?${q}`), param);
    });
  }
  it('366 days is the longest window', async () => {
    const res = await get(`${V2}/insights?from=2024-01-01&to=2024-12-31`);
    assert.equal(res.status, 200);
    assert.equal(res.body.series.length, 366);
  });
  it('without a key: 401', async () => {
    assertUnauthorized(await api(server.url)(`${V2}/insights?from=2026-03-01&to=2026-03-02`));
  });
  it('the page shows a bad window as an error and the last 30 days instead', async () => {
    const res = await fetch(`${server.url}/insights?from=2026-03-02&to=2026-03-01`, { headers: { cookie } });
    const html = await res.text();
    assert.equal(res.status, 200);
    assert.match(html, /role="alert"[^>]*>to: must not be before from/);
  });
});
