/**
 * The floor of `npm run bench:api`: the least a server can do to answer the benchmark's Customer
 * API requests with the same JSON bodies as svc. Raw `node:http`, postgres.js with prepared
 * (named) statements (its default), ONE statement per request, no auth (the account is fixed at
 * start), no framework, no validation library, no request id, no security headers. Its SQL is
 * written here by hand, independently of db/queries, but uses the same known-good plans (exact
 * totals from the counters, the page's ids first and then only those rows), so what svc costs
 * above it is the price of the stack, not of a different query. The benchmark checks that both
 * answer every scenario with the same body.
 *
 * Only what the scenarios send is understood: page, resultsPerPage, order_by, sort, channel_id,
 * conversation_id and query on the two lists; the two by-id reads; /healthz. Anything else is a
 * plain 400/404.
 *
 * usage: DATABASE_URL=… FLOOR_ACCOUNT_ID=N node --import tsx tests/bench/floor-server.ts PORT
 * (listens on 127.0.0.1; prints `listening PORT`; pool size DATABASE_POOL_SIZE, default 10 as svc)
 */
import http from 'node:http';
import postgres from 'postgres';

const url = process.env.DATABASE_URL;
const accountId = Number(process.env.FLOOR_ACCOUNT_ID);
if (!url || !Number.isInteger(accountId) || accountId < 1) throw new Error('DATABASE_URL and FLOOR_ACCOUNT_ID are required');
const sql = postgres(url, { max: Number(process.env.DATABASE_POOL_SIZE ?? 10), onnotice: () => {} });

const API = '/customer-api/v2';
const R = `${API}/response`;
const C = `${API}/conversation`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UTC = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`;
// Microsecond UTC text: sorts as the instants sort (merges responses and stored messages).
const UTC_US = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')`;
const RESPONSE_SORT: Record<string, string> = {
  created_at: 'created_at',
  likes: 'likes',
  dislikes: 'dislikes',
  comments: 'comments',
  id: 'id',
  response_id: 'id',
  channel_id: 'channel_id',
  conversation_id: 'conversation_id',
};
const CONVERSATION_SORT: Record<string, string> = {
  created_at: 'created_at',
  updated_at: 'updated_at',
  response_count: 'response_count',
  id: 'id',
  conversation_id: 'id',
  channel_id: 'channel_id',
};

class Refused extends Error {
  constructor(readonly status: number) {
    super(String(status));
  }
}

type Filter = { channel?: number; conversation?: string; query?: string };
type Page = { page: number; per: number; orderBy?: string; sort?: 'ASC' | 'DESC'; filter: Filter };

function readPage(q: URLSearchParams, sorts: Record<string, string>): Page {
  const int = (name: string, alias: string | null, min: number, max: number, d: number) => {
    const v = q.get(name) ?? (alias ? q.get(alias) : null);
    if (v === null || v === '') return d;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new Refused(400);
    return n;
  };
  const orderBy = q.get('order_by') ?? q.get('sortBy') ?? undefined;
  if (orderBy !== undefined && !(orderBy in sorts)) throw new Refused(400);
  const sort = (q.get('sort') ?? q.get('sortOrder') ?? undefined)?.toUpperCase();
  if (sort !== undefined && sort !== 'ASC' && sort !== 'DESC') throw new Refused(400);
  const channel = q.get('channel_id');
  const conversation = q.get('conversation_id') ?? undefined;
  if (conversation !== undefined && !UUID.test(conversation)) throw new Refused(400);
  return {
    page: int('page', null, 1, 1e9, 1),
    per: int('resultsPerPage', 'pageSize', 1, 100, 15),
    orderBy,
    sort: sort as Page['sort'],
    filter: { channel: channel ? int('channel_id', null, 1, 2 ** 31 - 1, 0) : undefined, conversation, query: q.get('query') || undefined },
  };
}

/** The next/previous link, with the parameters in svc's canonical order. */
function link(base: string, p: Page, page: number): string {
  const out = new URLSearchParams({ page: String(page), resultsPerPage: String(p.per) });
  if (p.orderBy) out.set('order_by', p.orderBy);
  if (p.sort) out.set('sort', p.sort);
  if (p.filter.channel) out.set('channel_id', String(p.filter.channel));
  if (p.filter.conversation) out.set('conversation_id', p.filter.conversation);
  if (p.filter.query) out.set('query', p.filter.query);
  return `${base}?${out.toString()}`;
}

function envelope(base: string, p: Page, count: number, results: unknown[]) {
  return {
    count,
    next: p.page * p.per < count ? link(base, p, p.page + 1) : null,
    previous: p.page > 1 ? link(base, p, p.page - 1) : null,
    results,
  };
}

const like = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

// Statement texts by shape, built once; postgres.js prepares each text once per connection.
const texts = new Map<string, string>();
function text(key: string, build: () => string): string {
  let t = texts.get(key);
  if (t === undefined) {
    t = build();
    texts.set(key, t);
  }
  return t;
}

type ResponseRow = {
  total: number;
  id: string | null;
  conversation_id: string;
  channel_id: number;
  question: string;
  answer: string;
  likes: number;
  dislikes: number;
  comments: number;
  declined: boolean;
  created_at: string;
};

async function listResponses(q: URLSearchParams) {
  const p = readPage(q, RESPONSE_SORT);
  const col = RESPONSE_SORT[p.orderBy ?? 'created_at']!;
  const dir = p.sort ?? 'DESC';
  const f = p.filter;
  const params: unknown[] = [accountId];
  const where = ['account_id = $1'];
  let ci = 0;
  let vi = 0;
  if (f.channel) {
    params.push(f.channel);
    ci = params.length;
    where.push(`channel_id = $${ci}`);
  }
  if (f.conversation) {
    params.push(f.conversation);
    vi = params.length;
    where.push(`conversation_id = $${vi}`);
  }
  if (f.query) {
    params.push(like(f.query));
    where.push(`(question ILIKE $${params.length} OR answer ILIKE $${params.length})`);
  }
  const shape = `r|${col}|${dir}|${f.channel ? 1 : 0}${f.conversation ? 1 : 0}${f.query ? 1 : 0}`;
  params.push(p.per, (p.page - 1) * p.per);
  const n = params.length;
  const t = text(shape, () => {
    const total = f.query
      ? `SELECT count(*)::int FROM responses WHERE ${where.join(' AND ')}`
      : f.conversation
        ? `SELECT COALESCE(sum(response_count), 0)::int FROM conversations WHERE account_id = $1 AND id = $${vi}${ci ? ` AND channel_id = $${ci}` : ''}`
        : f.channel
          ? 'SELECT COALESCE(sum(response_count), 0)::int FROM channels WHERE account_id = $1 AND id = $2'
          : 'SELECT COALESCE(max(response_count), 0)::int FROM accounts WHERE id = $1';
    const order = col === 'id' ? `id ${dir}` : `${col} ${dir}, id ${dir}`;
    return `SELECT (${total}) AS total, r.id, r.conversation_id, r.channel_id, r.question, r.answer, r.likes, r.dislikes, r.comments, r.declined, ${UTC('r.created_at')} AS created_at
      FROM (SELECT 1) one LEFT JOIN (
        (SELECT id, ${col} AS k FROM responses WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT $${n - 1} OFFSET $${n}) k
        JOIN responses r ON r.id = k.id) ON true
      ORDER BY ${col === 'id' ? `k.id ${dir}` : `k.k ${dir}, k.id ${dir}`}`;
  });
  const rows = await sql.unsafe<ResponseRow[]>(t, params as never[], { prepare: true });
  const results = [];
  for (const r of rows) if (r.id !== null) results.push(responseRecord(r));
  return envelope(R, p, rows[0]?.total ?? 0, results);
}

function responseRecord(r: Omit<ResponseRow, 'total'>) {
  return {
    response_id: r.id,
    id: r.id,
    question: r.question,
    answer: r.answer,
    channel_id: r.channel_id,
    conversation_id: r.conversation_id,
    created_at: r.created_at,
    likes: r.likes,
    dislikes: r.dislikes,
    comments: r.comments,
    declined: r.declined,
  };
}

// comment_list: the first 20 of response_comments (svc's COMMENTS_PER_RESPONSE), oldest first, ties by id.
const RESPONSE_BY_ID = `SELECT r.id, r.conversation_id, r.channel_id, r.question, r.answer, r.likes, r.dislikes, r.comments, r.declined,
    ${UTC('r.created_at')} AS created_at,
    (SELECT COALESCE(json_agg(json_build_object('text', x.body, 'created_at', ${UTC('x.created_at')}) ORDER BY x.created_at, x.id), '[]')
      FROM (SELECT body, created_at, id FROM response_comments WHERE response_id = r.id AND account_id = r.account_id
        ORDER BY created_at, id LIMIT 20) x) AS comment_list
  FROM responses r WHERE r.id = $1 AND r.account_id = $2`;

async function getResponse(id: string) {
  if (!UUID.test(id)) throw new Refused(404);
  const [row] = await sql.unsafe<Array<ResponseRow & { comment_list: unknown[] }>>(RESPONSE_BY_ID, [id, accountId], { prepare: true });
  if (!row) throw new Refused(404);
  return { ...responseRecord(row), comment_list: row.comment_list };
}

type ConversationRow = {
  total: number;
  id: string | null;
  title: string;
  status: string;
  response_count: number;
  channel_id: number;
  channel_name: string;
  account_id: number;
  created_at: string;
  updated_at: string;
  handled_by: string;
  assignee: string | null;
  waiting_since: string | null;
  resolved_at: string | null;
  csat: number | null;
};
// assignee: the assigned member's email (admin_users); the handoff columns as stored.
const CONVERSATION_COLUMNS = `c.id, c.title, c.status, c.response_count, c.channel_id, ch.name AS channel_name, c.account_id,
  ${UTC('c.created_at')} AS created_at, ${UTC('c.updated_at')} AS updated_at,
  c.handled_by, (SELECT au.email FROM admin_users au WHERE au.id = c.assignee_id) AS assignee,
  ${UTC('c.waiting_since')} AS waiting_since, ${UTC('c.resolved_at')} AS resolved_at, c.csat::int AS csat`;

async function listConversations(q: URLSearchParams) {
  const p = readPage(q, CONVERSATION_SORT);
  if (p.filter.conversation) throw new Refused(400);
  const col = CONVERSATION_SORT[p.orderBy ?? 'created_at']!;
  const dir = p.sort ?? 'DESC';
  const f = p.filter;
  const params: unknown[] = [accountId];
  const where = ['account_id = $1'];
  let qi = 0;
  if (f.channel) {
    params.push(f.channel);
    where.push(`channel_id = $${params.length}`);
  }
  if (f.query) {
    params.push(like(f.query));
    qi = params.length;
    where.push(`(title ILIKE $${qi} OR channel_id IN (SELECT id FROM channels WHERE account_id = $1 AND name ILIKE $${qi}))`);
  }
  const shape = `c|${col}|${dir}|${f.channel ? 1 : 0}${f.query ? 1 : 0}`;
  params.push(p.per, (p.page - 1) * p.per);
  const n = params.length;
  const t = text(shape, () => {
    const inChannel = (c: string) => (f.channel ? ` AND ${c} = $2` : '');
    // With a query: conversations of channels whose name matches come from the channel counters,
    // title matches in the other channels are counted row by row.
    const total = f.query
      ? `WITH m AS (SELECT id, conversation_count FROM channels WHERE account_id = $1 AND name ILIKE $${qi}${inChannel('id')})
         SELECT ((SELECT COALESCE(sum(conversation_count), 0) FROM m) + (SELECT count(*) FROM conversations
           WHERE account_id = $1 AND title ILIKE $${qi}${inChannel('channel_id')} AND channel_id NOT IN (SELECT id FROM m)))::int`
      : f.channel
        ? 'SELECT COALESCE(sum(conversation_count), 0)::int FROM channels WHERE account_id = $1 AND id = $2'
        : 'SELECT COALESCE(max(conversation_count), 0)::int FROM accounts WHERE id = $1';
    const order = col === 'id' ? `id ${dir}` : `${col} ${dir}, id ${dir}`;
    return `SELECT (${total}) AS total, ${CONVERSATION_COLUMNS}
      FROM (SELECT 1) one LEFT JOIN (
        (SELECT id, ${col} AS k FROM conversations WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT $${n - 1} OFFSET $${n}) k
        JOIN conversations c ON c.id = k.id JOIN channels ch ON ch.account_id = c.account_id AND ch.id = c.channel_id) ON true
      ORDER BY ${col === 'id' ? `k.id ${dir}` : `k.k ${dir}, k.id ${dir}`}`;
  });
  const rows = await sql.unsafe<ConversationRow[]>(t, params as never[], { prepare: true });
  const results = [];
  for (const r of rows) if (r.id !== null) results.push(conversationRecord(r));
  return envelope(C, p, rows[0]?.total ?? 0, results);
}

function conversationRecord(c: Omit<ConversationRow, 'total'>) {
  return {
    conversation_id: c.id,
    id: c.id,
    title: c.title,
    status: c.status,
    response_count: c.response_count,
    channel_id: c.channel_id,
    channel_name: c.channel_name,
    account_id: c.account_id,
    created_at: c.created_at,
    updated_at: c.updated_at,
    handled_by: c.handled_by,
    assignee: c.assignee,
    waiting_since: c.waiting_since,
    resolved_at: c.resolved_at,
    csat: c.csat,
  };
}

type Turn = { id: string; q: string; a: string; qm: string; am: string; t: string; s: string };
type Stored = { id: string; au: string; an: string | null; x: string; t: string; s: string; n: number };
type Attachment = { id: string; m: string | null; f: string; ct: string; s: number };
// stored: conversation_messages (members' replies, system lines, notes, visitors' while a person handles it).
const CONVERSATION_BY_ID = `SELECT ${CONVERSATION_COLUMNS},
    (SELECT COALESCE(json_agg(json_build_object('id', r.id, 'q', r.question, 'a', r.answer, 'qm', r.question_message_id,
        'am', r.answer_message_id, 't', ${UTC('r.created_at')}, 's', ${UTC_US('r.created_at')}) ORDER BY r.created_at, r.id), '[]')
      FROM responses r WHERE r.conversation_id = c.id AND r.account_id = c.account_id) AS turns,
    (SELECT COALESCE(json_agg(json_build_object('id', m.id, 'au', m.author, 'an', m.author_name, 'x', m.text,
        't', ${UTC('m.created_at')}, 's', ${UTC_US('m.created_at')}, 'n', m.seq) ORDER BY m.created_at, m.seq), '[]')
      FROM conversation_messages m WHERE m.conversation_id = c.id AND m.account_id = c.account_id) AS stored,
    (SELECT COALESCE(json_agg(json_build_object('id', a.id, 'm', a.message_id, 'f', a.filename, 'ct', a.content_type, 's', a.size)
        ORDER BY a.created_at, a.id), '[]')
      FROM attachments a WHERE a.conversation_id = c.id AND a.account_id = c.account_id) AS files
  FROM conversations c JOIN channels ch ON ch.account_id = c.account_id AND ch.id = c.channel_id
  WHERE c.id = $1 AND c.account_id = $2`;

async function getConversation(id: string) {
  if (!UUID.test(id)) throw new Refused(404);
  const [row] = await sql.unsafe<Array<ConversationRow & { turns: Turn[]; stored: Stored[]; files: Attachment[] }>>(CONVERSATION_BY_ID, [id, accountId], {
    prepare: true,
  });
  if (!row) throw new Refused(404);
  const files = (m: string) =>
    row.files.length
      ? row.files.filter((a) => a.m === m).map((a) => ({ upload_id: a.id, filename: a.f, content_type: a.ct, size: a.s, url: `${API}/attachments/${a.id}` }))
      : [];
  const message = (mid: string, author: string, name: string | null, content: string, at: string, rid: string | null) => ({
    message_id: mid,
    role: author === 'visitor' ? 'user' : 'assistant',
    author,
    author_name: name,
    content,
    created_at: at,
    response_id: rid,
    attachments: files(mid),
  });
  // Oldest first by microsecond time; at one instant a response before a stored message, then seq or id.
  const units = [
    ...row.turns.map((r) => ({ k: r.s, rank: 0, n: 0, id: r.id, turn: r, stored: null })),
    ...row.stored.map((m) => ({ k: m.s, rank: 1, n: m.n, id: m.id, turn: null, stored: m })),
  ];
  if (row.stored.length) units.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : a.rank - b.rank || a.n - b.n || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  const messages = [];
  for (const u of units) {
    const r = u.turn;
    if (r) {
      messages.push(message(r.qm, 'visitor', null, r.q, r.t, r.id));
      messages.push(message(r.am, 'ai', null, r.a, r.t, r.id));
    } else if (u.stored) messages.push(message(u.stored.id, u.stored.au, u.stored.an, u.stored.x, u.stored.t, null));
  }
  return { ...conversationRecord(row), messages };
}

async function route(path: string, q: URLSearchParams): Promise<unknown> {
  if (path === R) return listResponses(q);
  if (path === C) return listConversations(q);
  if (path.startsWith(`${R}/`)) return getResponse(path.slice(R.length + 1));
  if (path.startsWith(`${C}/`)) return getConversation(path.slice(C.length + 1));
  if (path === '/healthz') {
    await sql.unsafe('SELECT 1', [], { prepare: true });
    return { status: 'ok' };
  }
  throw new Refused(404);
}

const server = http.createServer((req, res) => {
  const u = req.url ?? '/';
  const i = u.indexOf('?');
  route(i < 0 ? u : u.slice(0, i), new URLSearchParams(i < 0 ? '' : u.slice(i + 1))).then(
    (body) => {
      const t = JSON.stringify(body);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(t) }).end(t);
    },
    (e: unknown) => {
      const status = e instanceof Refused ? e.status : 500;
      if (status === 500) process.stderr.write(`${(e as Error).stack ?? e}\n`);
      res.writeHead(status, { 'content-type': 'text/plain' }).end(String(status));
    },
  );
});

server.keepAliveTimeout = 65_000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
for (const s of ['SIGTERM', 'SIGINT'] as const)
  process.on(s, () => {
    server.close();
    void sql.end({ timeout: 2 }).finally(() => process.exit(0));
  });
