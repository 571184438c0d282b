/**
 * Opening a long conversation (issue 33 item 7): one conversation with 1,000 responses (each
 * answer with 20 comments) and 4,000 stored messages; then what /inbox/<id> reads on its first
 * load (and again on every refresh after a change) and what /conversations/<id> reads, RUNS times
 * each after 3 warm-ups, through the dashboard's service. On code before the paging, both are the
 * whole transcript (getTranscript).
 *
 *   TEST_DB=pglite node --import tsx tests/bench/inbox-conversation-bench.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { closeDatabase, getDb } from '../../db/client';
import * as dashboard from '../../lib/dashboard/service';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';

const RUNS = 20;
let dataDir: string | undefined;
if (process.env.TEST_DB !== 'postgres') {
  delete process.env.DATABASE_URL;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-inbox-conv-bench-'));
  process.env.DATA_DIR = dataDir;
}

type Loaded = { messages: unknown[] } | null;
const paged = dashboard as unknown as { getLatestMessages?: (a: number, c: string) => Promise<Loaded> };

async function main() {
  const db = await getDb();
  const a = await createTestAccount('Long conversation bench');
  const [channel] = await newChannelIds(1);
  const c = conversationLine({ channel_id: channel! });
  const lines: object[] = [c];
  for (let i = 0; i < 1000; i++) lines.push(responseLine(c, { question: `Question ${i}?`, answer: `Answer ${i}.` }));
  await importLines(a.accountId, lines as Parameters<typeof importLines>[1]);
  await db.execute(sql`
    INSERT INTO response_comments (account_id, response_id, visitor_id, body)
    SELECT ${a.accountId}, r.id, 'v', 'comment ' || g FROM responses r, generate_series(1, 20) g WHERE r.conversation_id = ${c.conversation_id}`);
  await db.execute(sql`
    INSERT INTO conversation_messages (account_id, conversation_id, author, text, created_at)
    SELECT ${a.accountId}, ${c.conversation_id}, CASE WHEN g % 2 = 0 THEN 'visitor' ELSE 'system' END, 'message ' || g, now() - interval '1 day' + make_interval(secs => g)
    FROM generate_series(1, 4000) g`);
  const inbox = () =>
    paged.getLatestMessages ? paged.getLatestMessages(a.accountId, c.conversation_id) : dashboard.getTranscript(a.accountId, c.conversation_id);
  const transcript = () => dashboard.getTranscript(a.accountId, c.conversation_id);
  const out: Record<string, unknown> = { db: process.env.TEST_DB ?? 'pglite', code: paged.getLatestMessages ? 'paged' : 'whole' };
  for (const [name, load] of [
    ['inbox_first_load', inbox],
    ['transcript_page', transcript],
  ] as const) {
    for (let i = 0; i < 3; i++) await load();
    const times: number[] = [];
    let messages = 0;
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      messages = ((await load()) as Loaded)!.messages.length;
      times.push(performance.now() - t0);
    }
    times.sort((x, y) => x - y);
    out[name] = { p50_ms: +times[RUNS >> 1]!.toFixed(1), max_ms: +times.at(-1)!.toFixed(1), messages };
  }
  out.load = os.loadavg().map((l) => +l.toFixed(1));
  console.log(JSON.stringify(out));
}

main()
  .finally(async () => {
    await closeDatabase();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  })
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
