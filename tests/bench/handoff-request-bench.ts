/**
 * `handoff:request` on a busy account (issue 33 item 6): what the visitor's "Talk to a person"
 * costs when the account has 2,000 first responses in the expected wait's window. One account per
 * time zone (Europe/Berlin, America/New_York), a member online, 2,000 planted first responses
 * each; then N requests alternating between the two through the handoff core (the widget's
 * `requestPerson` calls exactly this), after 4 warm-ups. Prints µs per request (wall) and the
 * date formatters built, counted at Intl.DateTimeFormat's constructor.
 *
 *   TEST_DB=pglite node --import tsx tests/bench/handoff-request-bench.ts [N]
 */
import { CLI } from '../../lib/audit/contract';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { closeDatabase, getDb, rows } from '../../db/client';
import { requestHandoff } from '../../lib/conversations/handoff';
import { saveHandoffSettings, touchDashboard } from '../../lib/conversations/availability';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';

const N = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 200);
const ZONES = ['Europe/Berlin', 'America/New_York'];

let dataDir: string | undefined;
if (process.env.TEST_DB !== 'postgres') {
  delete process.env.DATABASE_URL;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-handoff-bench-'));
  process.env.DATA_DIR = dataDir;
}

async function account(zone: string) {
  const db = await getDb();
  const a = await createTestAccount(`Handoff bench ${zone}`);
  const [owner] = await rows<{ id: number }>(db, sql`SELECT id FROM admin_users WHERE account_id = ${a.accountId} AND role = 'owner'`);
  const me = { accountId: a.accountId, userId: owner!.id, role: 'owner' as const };
  await touchDashboard(me);
  await saveHandoffSettings(CLI, me, { enabled: true, time_zone: zone, hours: Array(7).fill({ open: true, opens: '00:00', closes: '24:00' }), away_text: '' });
  const [channel] = await newChannelIds(1);
  const c = conversationLine({ channel_id: channel! });
  await importLines(a.accountId, [c, responseLine(c, { question: 'Where is my parcel?', answer: 'I could not find that.' })]);
  await db.execute(sql`
    INSERT INTO conversations (id, account_id, channel_id, title, created_at, updated_at, handed_off_at, first_reply_at)
    SELECT gen_random_uuid(), ${a.accountId}, ${channel!}, 'planted', now(), now(), now() - make_interval(mins => g), now() - make_interval(mins => g) + make_interval(secs => 30 + g % 300)
    FROM generate_series(1, 2000) g`);
  return { accountId: a.accountId, conversationId: c.conversation_id };
}

async function main() {
  const visitors = [];
  for (const zone of ZONES) visitors.push(await account(zone));
  const Original = Intl.DateTimeFormat;
  let built = 0;
  Intl.DateTimeFormat = new Proxy(Original, {
    construct(target, args, newTarget) {
      built++;
      return Reflect.construct(target, args, newTarget);
    },
  });
  for (let i = 0; i < 4; i++) await requestHandoff(visitors[i % 2]!);
  built = 0;
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await requestHandoff(visitors[i % 2]!);
  const wall = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  Intl.DateTimeFormat = Original;
  console.log(
    JSON.stringify({
      db: process.env.TEST_DB ?? 'pglite',
      requests: N,
      first_responses_per_account: 2000,
      us_per_request_wall: Math.round((wall * 1000) / N),
      us_per_request_cpu: Math.round((used.user + used.system) / N),
      formatters_built: built,
      formatters_per_request: +(built / N).toFixed(2),
      load: os.loadavg().map((l) => +l.toFixed(1)),
    }),
  );
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
