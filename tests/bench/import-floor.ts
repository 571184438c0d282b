/**
 * The import's floor (issue 11 item 4): what the database itself needs to hold the same file the
 * way svc holds it, with none of svc's work (no validation, no checks, no upsert, no counters, no
 * transaction rules). Fresh tables shaped like `conversations` and `responses` (same columns and
 * defaults, no constraints, no indexes) are filled with COPY, then every index the real tables
 * have (read from pg_indexes of the migrated schema, primary keys included) is built on them.
 * The file is turned into COPY text first, untimed. Run by tests/bench/import-bench.ts in a child
 * process whose environment names the database (DATABASE_URL, or DATA_DIR for PGlite), on the
 * same server (or the same PGlite build) as the CLI import it is set beside.
 *
 * usage: node --import tsx tests/bench/import-floor.ts FILE   (prints one JSON line of timings)
 */
import fs from 'node:fs';
import readline from 'node:readline';
import { sql } from 'drizzle-orm';
import { closeDatabase, copyFrom, getDatabase, rows } from '../../db/client';
import { copyTextField as field } from '../../db/queries/imports';

const CHUNK_CHARS = 8 * 1024 * 1024;
const ACCOUNT = 1;
const RESPONSE_COLUMNS = ['id', 'account_id', 'conversation_id', 'channel_id', 'question', 'answer', 'likes', 'dislikes', 'comments', 'created_at'];
const CONVERSATION_COLUMNS = ['id', 'account_id', 'channel_id', 'title', 'status', 'created_at', 'updated_at'];

const seconds = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e9;

async function copyText(file: string) {
  const chunks = { conversations: [] as string[], responses: [] as string[] };
  const open = { conversations: '', responses: '' };
  let records = 0;
  const lines = readline.createInterface({ input: fs.createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line) continue;
    const r = JSON.parse(line) as Record<string, string | number>;
    records++;
    const table = r.type === 'conversation' ? 'conversations' : 'responses';
    open[table] +=
      table === 'conversations'
        ? `${r.conversation_id}\t${ACCOUNT}\t${r.channel_id}\t${field(String(r.title))}\t${field(String(r.status))}\t${r.created_at}\t${r.updated_at}\n`
        : `${r.response_id}\t${ACCOUNT}\t${r.conversation_id}\t${r.channel_id}\t${field(String(r.question))}\t${field(String(r.answer))}\t${r.likes}\t${r.dislikes}\t${r.comments}\t${r.created_at}\n`;
    if (open[table].length >= CHUNK_CHARS) {
      chunks[table].push(open[table]);
      open[table] = '';
    }
  }
  for (const t of ['conversations', 'responses'] as const) if (open[t]) chunks[t].push(open[t]);
  return { chunks, records };
}

async function main() {
  const file = process.argv[2];
  if (!file) throw new Error('usage: import-floor.ts FILE');
  let t = process.hrtime.bigint();
  const { chunks, records } = await copyText(file);
  const convertSeconds = seconds(t);

  const { db, kind } = await getDatabase(); // migrated: the real tables and their indexes exist
  await db.execute(sql.raw(`SET TIME ZONE 'UTC'`));
  const indexes = await rows<{ tablename: string; indexname: string; indexdef: string }>(
    db,
    sql`
    SELECT tablename, indexname, indexdef FROM pg_indexes
    WHERE schemaname = 'public' AND tablename IN ('conversations', 'responses') ORDER BY tablename, indexname`,
  );
  for (const table of ['conversations', 'responses']) {
    await db.execute(sql.raw(`CREATE TABLE floor_${table} (LIKE ${table} INCLUDING DEFAULTS)`));
  }

  t = process.hrtime.bigint();
  for (const c of chunks.conversations) await copyFrom(db, 'floor_conversations', CONVERSATION_COLUMNS, c);
  const copyConversations = seconds(t);
  t = process.hrtime.bigint();
  for (const c of chunks.responses) await copyFrom(db, 'floor_responses', RESPONSE_COLUMNS, c);
  const copyResponses = seconds(t);

  const builds: Array<{ index: string; seconds: number }> = [];
  for (const ix of indexes) {
    const def = ix.indexdef
      .replace(` INDEX ${ix.indexname} ON `, ` INDEX floor_${ix.indexname} ON `)
      .replace(new RegExp(`ON (public\\.)?${ix.tablename} `), `ON floor_${ix.tablename} `);
    if (!def.includes(`floor_${ix.tablename}`)) throw new Error(`could not rewrite ${ix.indexdef}`);
    t = process.hrtime.bigint();
    await db.execute(sql.raw(def));
    builds.push({ index: `${ix.tablename}.${ix.indexname}`, seconds: seconds(t) });
  }
  const indexSeconds = builds.reduce((s, b) => s + b.seconds, 0);
  const total = copyConversations + copyResponses + indexSeconds;
  await closeDatabase();
  process.stdout.write(
    `${JSON.stringify({
      kind,
      records,
      convertSeconds,
      copyConversations,
      copyResponses,
      indexSeconds,
      totalSeconds: total,
      recordsPerSecond: Math.round(records / total),
      builds,
    })}\n`,
  );
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`import-floor: ${(e as Error).stack}\n`);
    process.exit(1);
  },
);
