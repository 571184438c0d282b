// One database: PostgreSQL — what a fuzzed value reaches is the same SQL on either (PGlite is PostgreSQL's own engine); the subject is the refusals
/**
 * Property-based fuzzing (fast-check) of every Customer API parameter and every widget socket
 * event against a real server. The parameter names come from the operation table
 * (lib/customer-api/operations.ts) and the event names and fields from lib/chat/protocol.ts and
 * lib/inbox/schemas.ts (the members' `/inbox`), so a new
 * parameter or event is fuzzed without touching this file. Properties: no 5xx, an answer within
 * a bound, every error is problem+json (HTTP) or `{ ok: false, error: { code, message } }` (acks)
 * and no body leaks internals. Replay a failure with FUZZ_SEED=<seed printed below>.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { z } from 'zod';
import { API_BASE, CUSTOMER_OPERATIONS, type CustomerOperation } from '../../lib/customer-api/operations';
import { ALIASES } from '../../lib/api/list-query';
import { ClientRequests, type ClientRequestName } from '../../lib/chat/protocol';
import { INBOX_REQUESTS } from '../../lib/inbox/protocol';
import { InboxRequests } from '../../lib/inbox/schemas';
import { listAccountMembers } from '../../lib/team/service';
import { connectMember } from '../helpers/inbox';
import { signIn } from '../helpers/signin';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { backendToken, connectVisitor, createTestWidgetClient, type Visitor } from '../helpers/widget';

const SEED = Number(process.env.FUZZ_SEED ?? Date.UTC(2026, 10, 23) % 2 ** 31);
const HTTP_RUNS = Number(process.env.FUZZ_HTTP_RUNS ?? 5500);
const SOCKET_RUNS_PER_EVENT = Number(process.env.FUZZ_SOCKET_RUNS ?? 900);
/** The inbox's events reach fewer branches (members are signed in, each payload one core call): fewer runs pay for them. */
const INBOX_RUNS_PER_EVENT = Number(process.env.FUZZ_INBOX_RUNS ?? 200);
/** No single request may take longer than this (generous: CI has 2 busy cores). */
const ANSWER_BOUND_MS = 5000;
console.log(
  `fuzz: seed ${SEED} (replay with FUZZ_SEED=${SEED}); ${HTTP_RUNS} HTTP cases, ${SOCKET_RUNS_PER_EVENT} per widget event, ${INBOX_RUNS_PER_EVENT} per inbox event`,
);

let server: TestServer;
before(
  async () => {
    server = await startTestServer({
      SOCKET_EVENTS_PER_10S: '1000000',
      ASKS_PER_MINUTE_PER_VISITOR: '1000000',
      ASKS_PER_MINUTE_PER_ADDRESS: '1000000',
      ASKS_PER_MINUTE_PER_CLIENT: '1000000',
      TOKEN_RATE_PER_IP_PER_MINUTE: '100000',
      TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000',
    });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

/** Text that must never reach a client: stack frames, SQL, file paths, driver names. */
const INTERNALS: Array<[string, RegExp]> = [
  ['a stack frame', /\n\s+at\s|\bat (?:async )?[\w$.<>]+ \(/],
  ['a file path', /(?:\/work\/|\/home\/|\/usr\/|node_modules|[\w-]+\.(?:ts|js|mjs|cjs):\d+)/],
  ['a driver name', /postgres|pglite|drizzle/i],
  ['SQL', /\b(?:select|insert|update|delete)\b[\s\S]*\b(?:from|into|set|where)\b|syntax error|relation "|violates|duplicate key|\bSQLSTATE\b/i],
  ['an exception name', /\b(?:TypeError|ReferenceError|RangeError|SyntaxError|ZodError)\b|\[object Object\]|undefined is not/],
];

/** Asserts that `text` leaks none of INTERNALS, except what the client itself sent. */
function assertNoInternals(text: string, sent: string, what: string) {
  for (const [name, re] of INTERNALS) {
    const hit = re.exec(text);
    if (hit && !re.test(sent)) assert.fail(`${what}: the body shows ${name} (${JSON.stringify(hit[0])}): ${text.slice(0, 500)}`);
  }
}

// ---------------------------------------------------------------- values: valid mixed with garbage

/** Ids that name something: the fuzzed account's records, another account's, and the visitor's own. */
const known = { uuids: [] as string[], channelIds: [] as number[], memberIds: [] as number[] };

const CLASSIC_STRINGS = [
  '',
  ' ',
  '0',
  '-0',
  '1',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  'NaN',
  'Infinity',
  '-Infinity',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '9007199254740993',
  '-9007199254740993',
  '99999999999999999999999999999999',
  '2147483648',
  '-2147483649',
  '18446744073709551616',
  "' OR '1'='1",
  "'; DROP TABLE responses; --",
  '%',
  '_',
  '\\',
  '%_%',
  '\\%',
  '"',
  '`',
  '$1',
  '${x}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '\u0000',
  'a\u0000b',
  '\u202e',
  '\ud800',
  '\uffff',
  '🦄'.repeat(20),
  'İ',
  'ß',
  'ﬀ',
  'e\u0301',
  '\r\n',
  '\t',
  '../../etc/passwd',
  'ASC',
  'DESC',
  'asc',
  'desc',
  'gridjs',
  'GRIDJS',
  'created_at',
  'likes',
  'response_count',
  'like',
  'dislike',
  '2026-01-01 10:00:00',
  '2026-01-01+10:00:00',
  '2026-02-30 10:00:00',
  '2026-01-01T10:00:00Z',
  '9999-12-31 23:59:59',
  '0001-01-01 00:00:00',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '00000000-0000-0000-0000-00000000000',
  '00000000000000000000000000000000',
  '{00000000-0000-0000-0000-000000000000}',
];

/** Values a schema names: enum options found by walking the zod schema (optional / array / pipe). */
function enumValues(schema: z.ZodType | undefined): string[] {
  const def = (schema as unknown as { def?: Record<string, unknown> } | undefined)?.def;
  if (!def) return [];
  if (def.type === 'enum') return Object.values(def.entries as Record<string, string>);
  const inner = [def.innerType, def.element, def.in, def.out, def.schema] as Array<z.ZodType | undefined>;
  return inner.flatMap((s) => enumValues(s));
}

const SCHEMA_ENUMS = [
  ...CUSTOMER_OPERATIONS.flatMap((op) => Object.values({ ...op.query.shape, ...(op.pathParams?.shape ?? {}) }) as z.ZodType[]),
  ...Object.values(ClientRequests).flatMap((s) => Object.values(s.shape) as z.ZodType[]),
  ...Object.values(InboxRequests).flatMap((s) => Object.values(s.shape) as z.ZodType[]),
].flatMap((s) => enumValues(s));

const longString = fc.tuple(fc.constantFrom('a', '%', 'é', '🦄', '\u0000', "'", '9'), fc.integer({ min: 300, max: 3000 })).map(([c, n]) => c.repeat(n));
const garbageString = fc.oneof(
  fc.constantFrom(...CLASSIC_STRINGS),
  fc.string({ maxLength: 40, unit: 'grapheme' }),
  fc.string({ maxLength: 40, unit: 'binary' }),
  fc.string({ maxLength: 12, unit: fc.constantFrom('%', '0', 'F', 'C', '2', 'e', 'z', '+', '&', '=', '#', '?', '/', ';') }),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.double().map(String),
  longString,
);
/** A string parameter value: half plausible (known ids, enum options, small ints), half garbage. */
const paramValue = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.oneof(
      fc.constantFrom(...SCHEMA_ENUMS),
      fc.integer({ min: -2, max: 120 }).map(String),
      fc.uuid().map(String),
      fc.constant(null).map(() => (known.uuids.length ? known.uuids[Math.floor(Math.random() * known.uuids.length)]! : randomUUID())),
      fc.constant(null).map(() => String(known.channelIds[Math.floor(Math.random() * known.channelIds.length)] ?? 1)),
    ),
  },
  { weight: 4, arbitrary: garbageString },
);

// ---------------------------------------------------------------- HTTP: every Customer API parameter

type Encoding = 'component' | 'raw' | 'double' | 'plus';
/** encodeURIComponent refuses lone surrogates: those are sent as U+FFFD, as a browser would. */
const encodeAs = (raw: string, how: Encoding, s = raw.toWellFormed()) =>
  how === 'component'
    ? encodeURIComponent(s)
    : how === 'double'
      ? encodeURIComponent(encodeURIComponent(s))
      : how === 'plus'
        ? encodeURIComponent(s).replace(/%20/g, '+')
        : s.replace(/[#?&]/g, encodeURIComponent);
/** Broken escapes, overlong and invalid UTF-8, encoded NUL: appended to a value or a name. */
const rawEscape = fc.constantFrom('', '', '', '%', '%z', '%0', '%00', '%C0%AF', '%FF', '%E2%82', '%ED%A0%80', '%25', '%2F', '%u0041', '%%%');

/** Every documented parameter of every operation, plus the aliases the API accepts. */
const PARAM_NAMES = [...new Set(CUSTOMER_OPERATIONS.flatMap((op) => Object.keys(op.query.shape)))];
const ALIAS_NAMES = Object.values(ALIASES);

const queryPair = fc.record({
  name: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...PARAM_NAMES, ...ALIAS_NAMES) },
    { weight: 1, arbitrary: fc.constantFrom('channel_ids', 'channel_ids[0]', 'page[]', 'PAGE', 'sort[]', '__proto__', 'constructor', '') },
    { weight: 1, arbitrary: garbageString },
  ),
  value: paramValue,
  nameEnc: fc.constantFrom<Encoding>('component', 'component', 'raw'),
  valueEnc: fc.constantFrom<Encoding>('component', 'component', 'raw', 'double', 'plus'),
  junk: rawEscape,
  bare: fc.boolean().map((b) => b && Math.random() < 0.1), // `?page` without `=`
});

const httpCase = fc.record({
  op: fc.constantFrom(...CUSTOMER_OPERATIONS.map((o) => o.operationId)),
  pathValues: fc.array(fc.record({ value: paramValue, enc: fc.constantFrom<Encoding>('component', 'component', 'raw', 'double'), junk: rawEscape }), {
    minLength: 1,
    maxLength: 1,
  }),
  pairs: fc.array(queryPair, { maxLength: 8 }),
  repeat: fc.nat({ max: 3 }), // repeats the first pair this many times
  slash: fc.constantFrom('', '', '', '', '', '', '', '/', '//'),
});

type HttpCase = typeof httpCase extends fc.Arbitrary<infer T> ? T : never;

function buildUrl(c: HttpCase): string {
  const op: CustomerOperation = CUSTOMER_OPERATIONS.find((o) => o.operationId === c.op)!;
  let path = `${API_BASE}${op.path}`;
  for (const name of Object.keys(op.pathParams?.shape ?? {})) {
    const pv = c.pathValues[0]!;
    const seg = encodeAs(pv.value, pv.enc).replace(/\//g, '%2F') + pv.junk;
    path = path.replace(`{${name}}`, seg === '' ? '%20' : seg);
  }
  const pairs = [...c.pairs, ...Array.from({ length: c.pairs.length ? c.repeat : 0 }, () => c.pairs[0]!)];
  const query = pairs
    .map((p) => {
      const name = encodeAs(p.name, p.nameEnc);
      return p.bare ? name : `${name}=${encodeAs(p.value, p.valueEnc)}${p.junk}`;
    })
    .join('&');
  // Next's 308 for a non-canonical path re-escapes every `%` of the query, and from about 3 KB of
  // them it resets the connection instead. Trailing slashes no longer reach it (the direct door
  // answers them: tests/api/trailing-slash.test.ts); the bound stays for any other such path.
  let url = `${path}${c.slash}${query ? `?${query}` : ''}`;
  const sentLength = (u: string) => new URL(`http://h${u}`).href.length; // after fetch's own escaping
  while (sentLength(url) > 2000) url = url.slice(0, url.lastIndexOf('&') > 0 ? url.lastIndexOf('&') : Math.floor(url.length / 2));
  return url;
}

async function checkHttp(url: string, key: string) {
  const started = Date.now();
  let res: Response;
  try {
    res = await fetch(`${server.url}${url}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(ANSWER_BOUND_MS), redirect: 'manual' });
  } catch (e) {
    assert.fail(`${url}: no answer within ${ANSWER_BOUND_MS} ms (${(e as Error).message})`);
  }
  const text = await res.text();
  const ms = Date.now() - started;
  assert.ok(res.status < 500, `${url}: ${res.status} ${text.slice(0, 300)}`);
  assert.ok(ms < ANSWER_BOUND_MS, `${url}: answered after ${ms} ms`);
  let decoded = url;
  try {
    decoded = decodeURIComponent(url);
  } catch {
    /* a broken escape stays as sent */
  }
  assertNoInternals(text, `${url}\n${decoded}`, url);
  if (res.status >= 400) {
    assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/, `${url}: ${res.status} is not problem+json`);
    const body = JSON.parse(text);
    assert.equal(body.status, res.status, url);
    assert.equal(typeof body.title, 'string', url);
    assert.equal(typeof body.type, 'string', url);
    assert.equal(typeof body.detail, 'string', url);
  } else if (res.status >= 300) {
    // Next's canonical-path redirects (a trailing or doubled slash): they stay on the API.
    assert.equal(res.status, 308, url);
    assert.ok(res.headers.get('location')?.startsWith(API_BASE), `${url}: redirected to ${res.headers.get('location')}`);
  } else {
    assert.equal(res.status, 200, url);
    const type = res.headers.get('content-type') ?? '';
    // Exports (docs/contracts.md §10) answer NDJSON or CSV: every NDJSON line is one JSON record.
    if (type.startsWith('application/x-ndjson')) for (const line of text.split('\n').filter(Boolean)) JSON.parse(line);
    else if (!type.startsWith('text/csv')) JSON.parse(text);
  }
  return { status: res.status, ms };
}

describe('fuzz: every Customer API parameter', () => {
  it(`answers ${HTTP_RUNS} generated requests without a 5xx, a hang or an internal detail`, { timeout: 600_000 }, async () => {
    const acct = await createTestAccount();
    const other = await createTestAccount();
    const [ch1, ch2, ch3] = await newChannelIds(3);
    known.channelIds.push(ch1!, ch2!, ch3!);
    for (const [accountId, ch] of [
      [acct.accountId, ch1!],
      [acct.accountId, ch2!],
      [other.accountId, ch3!],
    ] as const) {
      const conv = conversationLine({ channel_id: ch, title: "Fuzz %_' title", channel_name: 'Chan "x"' });
      const lines = [conv, responseLine(conv, { question: 'password reset?', answer: 'Use the link.' }), responseLine(conv)];
      await importLines(accountId, lines);
      known.uuids.push(conv.conversation_id, ...lines.slice(1).map((l) => (l as { response_id: string }).response_id));
    }
    const statuses = new Map<number, number>();
    let slowest = 0;
    await fc.assert(
      fc.asyncProperty(httpCase, async (c) => {
        const url = buildUrl(c);
        const { status, ms } = await checkHttp(url, acct.key).catch((e) => {
          console.log(`fuzz http failure: ${(e as Error).message}`);
          throw e;
        });
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        slowest = Math.max(slowest, ms);
      }),
      { numRuns: HTTP_RUNS, seed: SEED, endOnFailure: true },
    );
    console.log(`fuzz http: statuses ${JSON.stringify(Object.fromEntries(statuses))}; slowest ${slowest} ms`);
    // The generator reaches both sides: successes and precise refusals.
    assert.ok((statuses.get(200) ?? 0) > HTTP_RUNS / 20, 'enough valid requests');
    assert.ok((statuses.get(400) ?? 0) > HTTP_RUNS / 20, 'enough invalid requests');
    assert.ok((statuses.get(404) ?? 0) > 0, 'some unknown ids');
  });
});

// ---------------------------------------------------------------- sockets: every widget event

const jsonGarbage: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, undefined, true, false, 0, -1, 1.5, 2 ** 53 + 2, -(2 ** 63), Number.MAX_VALUE, Number.NaN, Infinity, '', [], {}),
  garbageString,
  fc.array(garbageString, { maxLength: 5 }),
  fc.jsonValue({ maxDepth: 3 }),
  fc.constant(null).map(() => ({ __proto__: { ok: true }, constructor: { prototype: 1 } })),
  fc.constant(null).map(() => Array.from({ length: 200 }, (_, i) => ({ [`k${i}`]: i }))),
);
/** A field value: the right type with a plausible value, the right type with a wrong value, or garbage. */
const fieldValue = fc.oneof(
  { weight: 3, arbitrary: paramValue },
  { weight: 1, arbitrary: fc.integer({ min: -5, max: 1_000_000 }) },
  { weight: 1, arbitrary: fc.array(paramValue, { maxLength: 7 }) },
  { weight: 2, arbitrary: jsonGarbage },
);

/** Candidates for a valid field; each field keeps those its own schema accepts (no hand-listed fields). */
const validCandidates = () => [
  ...known.uuids.slice(-2),
  randomUUID(),
  `fz-${randomUUID().slice(0, 8)}`,
  0,
  1,
  'hello?',
  'Thanks, that helped.',
  [],
  new Date(Date.now() + 3_600_000).toISOString(),
  ...known.memberIds.slice(-1),
  ...SCHEMA_ENUMS,
];
type Schemas = Record<string, z.ZodObject>;
function validField(schemas: Schemas, name: string, field: string): fc.Arbitrary<unknown> {
  const schema = (schemas[name]!.shape as Record<string, z.ZodType>)[field]!;
  return fc.constant(null).map(() => {
    const ok = validCandidates().filter((v) => v !== undefined && schema.safeParse(v).success);
    return ok[Math.floor(Math.random() * ok.length)];
  });
}

function eventPayload(schemas: Schemas, name: string): fc.Arbitrary<unknown> {
  const shape = schemas[name]!.shape as Record<string, z.ZodType>;
  const fields = Object.keys(shape);
  // Every field valid, then some of them replaced by a fuzzed value or dropped.
  const mutated = fc
    .record(
      Object.fromEntries(fields.map((f) => [f, fc.oneof({ weight: 3, arbitrary: validField(schemas, name, f) }, { weight: 1, arbitrary: fieldValue })])),
      { requiredKeys: fields.filter((f) => !shape[f]!.safeParse(undefined).success) },
    )
    .chain((o) => fc.dictionary(fc.constantFrom('extra', '__proto__', 'ok', 'seq', 'account_id'), jsonGarbage, { maxKeys: 2 }).map((x) => ({ ...x, ...o })));
  const objectPayload = fc.record(Object.fromEntries(fields.map((f) => [f, fieldValue])), { requiredKeys: [] });
  return fc.oneof({ weight: 4, arbitrary: mutated }, { weight: 2, arbitrary: objectPayload }, { weight: 1, arbitrary: jsonGarbage });
}

/** An acknowledgement is `{ ok: true, … }` or exactly `{ ok: false, error: { code, message } }`, never `internal`, never an internal detail; counts codes. */
function assertCleanAck(name: string, sent: string, ack: unknown, codes: Map<string, number>) {
  assert.ok(ack && typeof ack === 'object', `${name}: ack ${JSON.stringify(ack)}`);
  const a = ack as { ok: unknown; error?: { code: unknown; message: unknown } };
  const text = JSON.stringify(ack);
  if (a.ok === true) {
    codes.set('ok', (codes.get('ok') ?? 0) + 1);
  } else {
    assert.equal(a.ok, false, `${name}: ${text}`);
    assert.deepEqual(Object.keys(a).sort(), ['error', 'ok'], `${name}: ${text}`);
    assert.equal(typeof a.error?.code, 'string', text);
    assert.equal(typeof a.error?.message, 'string', text);
    assert.ok((a.error!.message as string).length > 0, text);
    assert.notEqual(a.error!.code, 'internal', `${name} ${sent.slice(0, 300)}: ${text}`);
    codes.set(a.error!.code as string, (codes.get(a.error!.code as string) ?? 0) + 1);
  }
  assertNoInternals(text, sent, `${name} ${sent.slice(0, 200)}`);
}

/** Sends `runs` generated payloads of `name` through `request`, each acknowledged cleanly within the bound. */
async function fuzzEvent(schemas: Schemas, name: string, runs: number, request: (name: string, payload: unknown) => Promise<unknown>, why: () => string) {
  const codes = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(eventPayload(schemas, name), async (payload) => {
      const sent = JSON.stringify(payload) ?? 'undefined';
      const started = Date.now();
      let ack: unknown;
      try {
        ack = await request(name, payload);
      } catch (e) {
        assert.fail(`${name} ${sent.slice(0, 300)}: no acknowledgement within ${ANSWER_BOUND_MS} ms (${(e as Error).message}; ${why()})`);
      }
      assert.ok(Date.now() - started < ANSWER_BOUND_MS);
      assertCleanAck(name, sent, ack, codes);
    }),
    { numRuns: runs, seed: SEED, endOnFailure: true },
  );
  console.log(`fuzz socket ${name}: ${JSON.stringify(Object.fromEntries(codes))}`);
  assert.ok((codes.get('invalid_request') ?? 0) > runs / 10, 'enough invalid requests');
}

describe('fuzz: every widget socket event', () => {
  for (const name of Object.keys(ClientRequests) as ClientRequestName[]) {
    it(`acknowledges ${SOCKET_RUNS_PER_EVENT} generated '${name}' requests with ok or a clean error`, { timeout: 300_000 }, async (t) => {
      const acct = await createTestAccount();
      const client = await createTestWidgetClient(acct.accountId, ['example.com']);
      const visitor: Visitor = await connectVisitor(server.url, (await backendToken(server.url, client)).access_token, 'https://example.com');
      t.after(() => visitor.close());
      // The visitor's own conversation and response, so valid ids reach the handlers.
      const own = await visitor.ok<{ conversation_id: string; response_id: string }>('ask', { client_message_id: `seed-${name}`, text: 'hello?' });
      await visitor.finished(own.response_id);
      known.uuids.push(own.conversation_id, own.response_id);
      await fuzzEvent(
        ClientRequests,
        name,
        SOCKET_RUNS_PER_EVENT,
        (n, payload) => visitor.request(n as ClientRequestName, payload, ANSWER_BOUND_MS),
        () => `disconnect: ${visitor.disconnectReason}`,
      );
      assert.equal(visitor.socket.connected, true, 'the socket is still open');
    });
  }
});

describe('fuzz: every inbox socket event', () => {
  for (const name of INBOX_REQUESTS) {
    it(`acknowledges ${INBOX_RUNS_PER_EVENT} generated '${name}' requests with ok or a clean error`, { timeout: 300_000 }, async (t) => {
      const acct = await createTestAccount();
      const signed = await signIn(server.url, acct.email, acct.password);
      assert.ok(signed.cookie, 'signed in');
      const member = await connectMember(server.url, signed.cookie);
      t.after(() => member.close());
      // Conversations of the member's account, so valid ids reach the core.
      const [ch] = await newChannelIds(1);
      const convs = [1, 2].map(() => conversationLine({ channel_id: ch!, title: 'Fuzz inbox' }));
      await importLines(acct.accountId, convs);
      known.uuids.push(...convs.map((c) => c.conversation_id));
      known.memberIds.push(...(await listAccountMembers(acct.accountId)).members.map((m) => m.user_id));
      await fuzzEvent(
        InboxRequests,
        name,
        INBOX_RUNS_PER_EVENT,
        (n, payload) => member.request(n, payload, ANSWER_BOUND_MS),
        () => `disconnect: ${member.disconnected}`,
      );
      assert.equal(member.socket.connected, true, 'the socket is still open');
    });
  }
});
