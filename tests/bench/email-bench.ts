/**
 * Inbound mail across two instances (issue 34 "Speed"): PostgreSQL + Redis, each instance with its
 * own SMTP listener, svc's outbound mail going to a real SMTP server (tests/helpers/smtp.ts). MAILS
 * answerable questions from SENDERS addresses, half to each listener, CONCURRENCY in flight through
 * pooled connections (one per lane, so nothing queues in the client). Measured:
 *   - accepted: from `sendMail` to its `250` (goal p99 ≤ 100 ms);
 *   - AI mail: from the `250` to svc's answer (In-Reply-To the asked Message-ID) at the SMTP server,
 *     built-in engine (goal p50 ≤ 2 s);
 *   - lost (accepted, no inbound_mails row or never `done`) and answered twice (two mails with one
 *     In-Reply-To): goal 0 each, enforced (exit 1);
 *   - CPU: both instances' user+system time (/proc/<pid>/stat) from the first send to the last
 *     answer mail, per mail; beside it the same per widget question (WIDGET questions asked on
 *     connected visitors, ask → answer.done, CONCURRENCY at once).
 * Loopback only; stops by itself.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/em_bench REDIS_URL=redis://127.0.0.1:6379/9 \
 *     npm run bench:email [-- MAILS SENDERS WIDGET CONCURRENCY RATE]
 * RATE: mails per second in all, paced (default 0: as fast as the lanes go, a burst).
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import nodemailer from 'nodemailer';
import type { Instance } from '../helpers/instances';
import { cpuSeconds, latencyLine, startRun, summarize } from './stats';

if (!process.env.DATABASE_URL || !process.env.REDIS_URL) {
  console.error('needs DATABASE_URL (an empty PostgreSQL database) and REDIS_URL');
  process.exit(2);
}
process.env.TEST_DB = 'postgres';
process.env.REDIS_PREFIX ??= `em:bench-${process.pid}:`;
const DOMAIN = 'mail.bench.test';
// This process makes the account's address (lib/email/address.ts reads the domain from its env).
process.env.INBOUND_MAIL_DOMAIN = DOMAIN;

const nums = process.argv
  .slice(2)
  .filter((a) => /^\d+$/.test(a))
  .map(Number);
const MAILS = nums[0] ?? 1000;
const SENDERS = Math.min(nums[1] ?? 200, MAILS);
const WIDGET = nums[2] ?? 200;
const CONCURRENCY = Math.max(2, nums[3] ?? 20);
const RATE = nums[4] ?? 0;
const LANES = Math.ceil(CONCURRENCY / 2); // per instance, each lane one pooled connection
const WAIT_MS = 5 * 60_000;
/** A 4xx (try later) is retried as a sending server would, sooner; at most this often per mail. */
const RETRY_AFTER_MS = 1000;
const MAX_TRIES = 10;

const DOCUMENTS: Array<[string, string]> = [
  ['returns.md', '# Returns\n\nYou can return any item within 30 days for a full refund.\n'],
  ['shipping.md', '# Shipping\n\nOrders ship within 2 business days. Delivery takes 3 to 5 business days within the country.\n'],
  ['payment.md', '# Payment\n\nWe accept credit cards, debit cards and bank transfer. You are charged when your order ships.\n'],
];
const QUESTIONS = [
  'How many days do I have to return an item?',
  'Can I return an item for a full refund?',
  'Do you accept credit cards?',
  'How long does shipping take?',
  'How long does delivery take within the country?',
  'When do orders ship?',
  'Which payment methods do you accept?',
  'Can I pay by bank transfer?',
  'When am I charged for my order?',
];
const GREETINGS = ['', 'Hello, ', 'Hi there! '];
const questionOf = (i: number) => `${GREETINGS[i % GREETINGS.length]}${QUESTIONS[Math.floor(i / GREETINGS.length) % QUESTIONS.length]}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const goal = (met: boolean) => (met ? 'met' : 'NOT met');

/** Runs `fn` over `items` with `lanes` at once (each lane takes the next item when it is done). */
async function inLanes<T>(items: T[], lanes: number, fn: (item: T, lane: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let i = next++; i < items.length; i = next++) await fn(items[i]!, lane);
    }),
  );
}

type Asked = { i: number; instance: number; from: string; messageId: string; acceptedAt?: number; ms?: number; tries: number; error?: string };

async function main() {
  const { startInstance, removeInstance, freePort } = await import('../helpers/instances');
  const { startSmtpServer } = await import('../helpers/smtp');
  const { createTestAccount } = await import('../helpers/builders');
  const { addKnowledge, backendToken, connectVisitor, createTestWidgetClient } = await import('../helpers/widget');
  const { inboundAddress } = await import('../../lib/email/address');
  const { getDb, rows, closeDatabase } = await import('../../db/client');
  const { closeRedis } = await import('../../lib/redis/client');
  const { sql } = await import('drizzle-orm');

  const bench = startRun();
  const run = randomUUID().slice(0, 8);

  // svc's outbound mail: each answer's arrival, and both instances' CPU at that moment (the window's end).
  const arrivals = new Map<string, number[]>();
  let others = 0;
  let cpuAtLastAnswer: number[] | null = null;
  let lastAnswerAt = 0;
  let pids: number[] = [];
  const sink = await startSmtpServer(0, [], (m) => {
    const at = performance.now();
    if (!m.inReplyTo) {
      others++;
      return;
    }
    const seen = arrivals.get(m.inReplyTo) ?? [];
    seen.push(at);
    arrivals.set(m.inReplyTo, seen);
    if (pids.length) cpuAtLastAnswer = pids.map(cpuSeconds);
    lastAnswerAt = at;
  });

  const smtpPorts = [await freePort(), await freePort()];
  const base = {
    DATABASE_URL: process.env.DATABASE_URL!,
    REDIS_URL: process.env.REDIS_URL!,
    REDIS_PREFIX: process.env.REDIS_PREFIX!,
    INBOUND_MAIL_DOMAIN: DOMAIN,
    SMTP_URL: sink.url,
    MAIL_FROM: 'svc bench <answers@bench.test>',
    INBOUND_MAILS_PER_SENDER_PER_MINUTE: '100000',
    INBOUND_MAILS_PER_ACCOUNT_PER_MINUTE: '1000000',
    EMAIL_ANSWERS_PER_SENDER_PER_HOUR: '1000',
    TOKEN_RATE_PER_IP_PER_MINUTE: '1000000',
    TOKEN_RATE_PER_CLIENT_PER_MINUTE: '1000000',
    ASKS_PER_MINUTE_PER_ADDRESS: '1000000',
    ASKS_PER_MINUTE_PER_CLIENT: '1000000',
    SOCKET_EVENTS_PER_10S: '100000',
    WIDGET_SOCKETS_PER_ADDRESS: '100000',
    LOG_LEVEL: 'warn',
  };
  // One after another (the first migrates), each with its own listener port.
  const instances: Instance[] = [];
  const stopAll = async () => {
    await Promise.all(instances.map((i) => removeInstance(i)));
    await sink.stop();
  };
  try {
    for (const [k, port] of smtpPorts.entries()) instances.push(await startInstance(`mail-${k}`, { ...base, INBOUND_SMTP_PORT: String(port) }));
  } catch (e) {
    await stopAll();
    throw e;
  }
  pids = instances.map((i) => i.child!.pid!);
  // What the instances log from here on (LOG_LEVEL warn): a failed pass or a retried mail shows there.
  const logged = instances.map((inst) => {
    const lines: string[] = [];
    const keep = (b: Buffer) =>
      lines.push(
        ...b
          .toString()
          .split('\n')
          .filter((l) => l.trim() && !l.startsWith('svc is listening')),
      );
    inst.child!.stdout!.on('data', keep);
    inst.child!.stderr!.on('data', keep);
    return lines;
  });
  const transports = smtpPorts.map((port) =>
    nodemailer.createTransport({
      host: '127.0.0.1',
      port,
      secure: false,
      ignoreTLS: true,
      pool: true,
      maxConnections: LANES,
      maxMessages: Number.POSITIVE_INFINITY,
      // Nagle off, as in the listener: nodemailer writes the message's closing dot apart, which else waits for the server's delayed ACK (40 ms a mail).
      getSocket: (_o: unknown, cb: (err: Error | null, s?: { connection: net.Socket }) => void) => {
        const socket = net.connect({ host: '127.0.0.1', port }, () => cb(null, { connection: socket }));
        socket.setNoDelay(true);
        socket.once('error', (e) => cb(e));
      },
    } as Parameters<typeof nodemailer.createTransport>[0]),
  );
  const closers: Array<() => void> = [];
  let failedGoals = false;
  try {
    const acct = await createTestAccount('Email bench');
    for (const [name, text] of DOCUMENTS) await addKnowledge(acct.accountId, name, text);
    const { address } = await inboundAddress(acct.accountId);
    const db = await getDb();

    // Sending: half to each listener, LANES per instance at once.
    const asked: Asked[] = Array.from({ length: MAILS }, (_, i) => ({
      i,
      instance: i % 2,
      from: `sender-${i % SENDERS}-${run}@example.org`,
      messageId: `<bench-${run}-${i}@example.org>`,
      tries: 0,
    }));
    const byId = new Map(asked.map((a) => [a.messageId, a]));
    const refusals = new Map<string, number>();
    const cpu0 = pids.map(cpuSeconds);
    const t0 = performance.now();
    await Promise.all(
      [0, 1].map((k) =>
        inLanes(
          asked.filter((a) => a.instance === k),
          LANES,
          async (a) => {
            if (RATE > 0) await sleep(Math.max(0, t0 + (a.i / RATE) * 1000 - performance.now()));
            for (;;) {
              a.tries++;
              const sent = performance.now();
              try {
                await transports[k]!.sendMail({
                  from: a.from,
                  to: address,
                  subject: `Question ${a.i}`,
                  text: questionOf(a.i),
                  messageId: a.messageId,
                });
                a.acceptedAt = performance.now();
                a.ms = a.acceptedAt - sent;
                return;
              } catch (e) {
                const code = (e as { responseCode?: number }).responseCode ?? 0;
                if (code >= 400 && code < 500 && a.tries < MAX_TRIES) {
                  const why = `${code} ${String((e as { response?: string }).response ?? (e as Error).message)
                    .replace(/^\d{3}\s*/, '')
                    .slice(0, 60)}`;
                  refusals.set(why, (refusals.get(why) ?? 0) + 1);
                  await sleep(RETRY_AFTER_MS);
                  continue;
                }
                a.error = `${code || ''} ${(e as Error).message}`.trim();
                return;
              }
            }
          },
        ),
      ),
    );
    const sendWall = (performance.now() - t0) / 1000;
    const accepted = asked.filter((a) => a.acceptedAt !== undefined);
    const notAccepted = asked.filter((a) => a.acceptedAt === undefined);
    const acceptMs = accepted.map((a) => a.ms!);
    // Each lane's first mail opened its connection.
    const firstOnConnection = new Set([0, 1].flatMap((k) => asked.filter((a) => a.instance === k).slice(0, LANES)));
    console.log(
      `email: ${MAILS} mails from ${SENDERS} senders into 2 instances, ${CONCURRENCY} in flight (${LANES} pooled connections per instance), ${RATE > 0 ? `paced at ${RATE}/s` : 'as fast as they go'}`,
    );
    console.log(
      `accepted (250): ${accepted.length} of ${MAILS} in ${sendWall.toFixed(1)} s (${(accepted.length / sendWall).toFixed(0)}/s); ` +
        `4xx refusals retried after ${RETRY_AFTER_MS} ms: ${[...refusals.values()].reduce((x, y) => x + y, 0)}; not accepted: ${notAccepted.length}`,
    );
    for (const [why, n] of refusals) console.log(`  refused ${n}×: ${why}`);
    for (const a of notAccepted.slice(0, 5)) console.log(`  not accepted: ${a.messageId} after ${a.tries} tries: ${a.error}`);
    const p99 = summarize(acceptMs).p99;
    console.log(`  sendMail → 250: ${latencyLine(acceptMs)}   goal p99 ≤ 100 ms: ${goal(p99 <= 100)}`);
    console.log(
      `  of which the first on each connection (opens it): ${latencyLine(accepted.filter((a) => firstOnConnection.has(a)).map((a) => a.ms!))}; ` +
        `the others: ${latencyLine(accepted.filter((a) => !firstOnConnection.has(a)).map((a) => a.ms!))}`,
    );

    // Waiting: every accepted mail answered at the SMTP server, or handled otherwise in the database.
    type Row = {
      message_id: string;
      status: string;
      last_error: string | null;
      response_id: string | null;
      declined: boolean | null;
      answer_error: string | null;
      outcome: string | null;
      mail_status: string | null;
      mail_error: string | null;
    };
    const state = () =>
      rows<Row>(
        db,
        // The Message-ID is recorded once processed; before, it is read from the stored message.
        sql`SELECT COALESCE(im.message_id, substring(convert_from(im.raw, 'UTF8') from '(?in)^message-id:[[:space:]]*(<[^>]+>)')) AS message_id, im.status, im.last_error, r.id AS response_id, r.declined, r.error AS answer_error, e.outcome,
              m.status AS mail_status, m.last_error AS mail_error
            FROM inbound_mails im
            LEFT JOIN responses r ON r.account_id = im.account_id AND r.conversation_id = im.conversation_id AND r.client_message_id = im.client_message_id
            LEFT JOIN email_answers e ON e.response_id = r.id
            LEFT JOIN mails m ON m.response_id = r.id
            WHERE im.account_id = ${acct.accountId}`,
      );
    /** Why a mail got no answer at the SMTP server; null while it may still get one. */
    const settledWhy = (r: Row | undefined): string | null => {
      if (!r) return null;
      if (r.status === 'failed') return `inbound failed (${r.last_error ?? '?'})`;
      if (r.status === 'duplicate') return 'inbound duplicate';
      if (r.status !== 'done') return null;
      if (r.answer_error) return `answer failed (${r.answer_error})`;
      if (r.outcome === 'handed_off') return 'declined → handed off';
      if (r.outcome === 'not_mailed') return 'not mailed';
      if (r.mail_status === 'refused' || r.mail_status === 'failed') return `answer mail ${r.mail_status} (${r.mail_error ?? '?'})`;
      return null;
    };
    const answered = () => accepted.filter((a) => arrivals.has(a.messageId)).length;
    const deadline = performance.now() + WAIT_MS;
    let last: Row[] = [];
    for (let tick = 0; performance.now() < deadline; tick++) {
      if (answered() === accepted.length) break;
      if (tick % 3 === 2) {
        last = await state();
        const byMessage = new Map(last.map((r) => [r.message_id, r]));
        if (accepted.every((a) => arrivals.has(a.messageId) || settledWhy(byMessage.get(a.messageId)) !== null)) break;
      }
      await sleep(1000);
    }
    const answerWall = (performance.now() - t0) / 1000;
    const cpu1 = cpuAtLastAnswer ?? pids.map(cpuSeconds);
    await sleep(3000); // a second answer to one mail would come about now (the answers' and the mail worker's polls)
    last = await state();
    const byMessage = new Map<string, Row[]>();
    for (const r of last) byMessage.set(r.message_id, [...(byMessage.get(r.message_id) ?? []), r]);

    const afterMs = accepted.filter((a) => arrivals.has(a.messageId)).map((a) => arrivals.get(a.messageId)![0]! - a.acceptedAt!);
    const p50 = summarize(afterMs).p50;
    console.log(`AI mail at the SMTP server after the 250: ${latencyLine(afterMs)}   goal p50 ≤ 2 s: ${goal(p50 <= 2000)}`);
    // Where the time goes, on the database's clock from the stored row (just before the 250).
    const [stages] = await rows<Record<'processed' | 'handled' | 'sent', number | null>>(
      db,
      sql`SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM im.processed_at - im.received_at) * 1000) AS processed,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM e.at - im.received_at) * 1000) AS handled,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM m.sent_at - im.received_at) * 1000) AS sent
          FROM inbound_mails im
          LEFT JOIN responses r ON r.account_id = im.account_id AND r.conversation_id = im.conversation_id AND r.client_message_id = im.client_message_id
          LEFT JOIN email_answers e ON e.response_id = r.id
          LEFT JOIN mails m ON m.response_id = r.id
          WHERE im.account_id = ${acct.accountId}`,
    );
    const ms = (x: number | null | undefined) => (x == null ? '–' : `${Number(x).toFixed(0)} ms`);
    console.log(
      `  p50 from the stored mail: processed (conversation, question) ${ms(stages?.processed)}, answer handled (email_answers) ${ms(stages?.handled)}, mail sent ${ms(stages?.sent)}`,
    );
    console.log(`  all answered or settled ${answerWall.toFixed(1)} s after the first send`);
    const noRow = accepted.filter((a) => !byMessage.has(a.messageId));
    const notDone = accepted.filter((a) => byMessage.get(a.messageId)?.some((r) => r.status !== 'done' && r.status !== 'duplicate'));
    const lost = noRow.length + notDone.length;
    const twice = [...arrivals.entries()].filter(([, at]) => at.length > 1);
    const unmatched = [...arrivals.keys()].filter((id) => !byId.has(id)).length;
    const why = new Map<string, number>();
    for (const a of accepted.filter((x) => !arrivals.has(x.messageId))) {
      const r = byMessage.get(a.messageId)?.[0];
      const w =
        settledWhy(r) ??
        (r
          ? `unanswered (inbound ${r.status}, response ${r.response_id ? 'stored' : 'none'}, ${r.outcome ?? 'not handled'}, mail ${r.mail_status ?? 'none'})`
          : 'no row');
      why.set(w, (why.get(w) ?? 0) + 1);
    }
    const notAnswered = accepted.length - answered();
    console.log(
      `not answered by mail: ${notAnswered}${notAnswered ? ` (${[...why.entries()].map(([w, n]) => `${w}: ${n}`).join('; ')})` : ''}; ` +
        `other mails at the SMTP server: ${others + unmatched}`,
    );
    console.log(`lost: ${lost} (no inbound_mails row ${noRow.length}, never done ${notDone.length})   goal 0: ${goal(lost === 0)}`);
    for (const a of [...noRow, ...notDone].slice(0, 5))
      console.log(`  lost: ${a.messageId} ${JSON.stringify(byMessage.get(a.messageId)?.map((r) => [r.status, r.last_error]) ?? null)}`);
    console.log(`answered twice: ${twice.length}   goal 0: ${goal(twice.length === 0)}`);
    for (const [id, at] of twice.slice(0, 5)) console.log(`  twice: ${id} ${at.length} mails`);
    failedGoals = lost > 0 || twice.length > 0;

    const mailCpu = cpu1.map((c, k) => c - cpu0[k]!);
    const mailWall = cpuAtLastAnswer ? (lastAnswerAt - t0) / 1000 : answerWall;
    const perMail = ((mailCpu[0]! + mailCpu[1]!) / Math.max(1, accepted.length)) * 1000;
    console.log(
      `CPU from the first send to the last answer mail: A ${mailCpu[0]!.toFixed(2)} s, B ${mailCpu[1]!.toFixed(2)} s over ${mailWall.toFixed(1)} s; ` +
        `${perMail.toFixed(2)} ms per mail (A ${((mailCpu[0]! / accepted.length) * 1000).toFixed(2)}, B ${((mailCpu[1]! / accepted.length) * 1000).toFixed(2)})`,
    );

    // The widget's question beside it: WIDGET visitors (half on each instance), connected first, each asking once.
    const client = await createTestWidgetClient(acct.accountId, ['example.com']);
    const visitors: Array<Awaited<ReturnType<typeof connectVisitor>>> = [];
    await inLanes(
      Array.from({ length: WIDGET }, (_, i) => i),
      CONCURRENCY,
      async (i) => {
        const url = instances[i % 2]!.url;
        const issued = await backendToken(url, client, `v_${randomUUID().replace(/-/g, '')}`);
        const v = await connectVisitor(url, issued.access_token, 'https://example.com');
        closers.push(() => v.close());
        visitors[i] = v;
      },
    );
    const widgetMs: number[] = [];
    let widgetErrors = 0;
    let widgetDeclined = 0;
    const wCpu0 = pids.map(cpuSeconds);
    const w0 = performance.now();
    await inLanes(
      visitors.map((v, i) => ({ v, i })),
      CONCURRENCY,
      async ({ v, i }) => {
        const sent = performance.now();
        try {
          const ack = await v.ok<{ response_id: string }>('ask', { client_message_id: `bench-${i}`, text: questionOf(i) });
          const end = await v.finished(ack.response_id, 60_000);
          widgetMs.push(performance.now() - sent);
          if (end.type !== 'answer.done') widgetErrors++;
          else if ((end as { declined?: boolean }).declined) widgetDeclined++;
        } catch (e) {
          widgetErrors++;
          if (widgetErrors <= 3) console.log(`  widget question ${i}: ${(e as Error).message.slice(0, 200)}`);
        }
      },
    );
    const wWall = (performance.now() - w0) / 1000;
    const wCpu = pids.map((pid, k) => cpuSeconds(pid) - wCpu0[k]!);
    const perQuestion = ((wCpu[0]! + wCpu[1]!) / Math.max(1, WIDGET)) * 1000;
    console.log(
      `widget: ${WIDGET} questions (visitors connected before), ${CONCURRENCY} at once, ask → answer.done: ${latencyLine(widgetMs)}; declined ${widgetDeclined}, errors ${widgetErrors}`,
    );
    console.log(
      `CPU over the widget questions: A ${wCpu[0]!.toFixed(2)} s, B ${wCpu[1]!.toFixed(2)} s over ${wWall.toFixed(1)} s; ${perQuestion.toFixed(2)} ms per question`,
    );
    console.log(`CPU per mail ${perMail.toFixed(2)} ms vs per widget question ${perQuestion.toFixed(2)} ms (${(perMail / perQuestion).toFixed(1)}×)`);
    for (const [k, lines] of logged.entries())
      if (lines.length)
        console.log(
          `${instances[k]!.name} logged ${lines.length} lines, e.g.: ${lines
            .slice(0, 3)
            .map((l) => l.slice(0, 300))
            .join(' | ')}`,
        );
    console.log(bench.line());
  } finally {
    for (const c of closers) c();
    for (const t of transports) t.close();
    await sleep(200);
    await stopAll();
    await closeRedis().catch(() => {});
    await closeDatabase().catch(() => {});
  }
  if (failedGoals) throw new Error('mail was lost or answered twice');
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
