/**
 * An instance whose PostgreSQL is gone waits quietly (docs/contracts.md §9, issue 23 item 9): with 500
 * answers produced but not yet stored and a PRIVATE PostgreSQL server stopped, the instance uses
 * under 5 % of a core (CPU seconds of its process over the outage, not wall-clock load, so a busy
 * machine does not make it flake), and once PostgreSQL is back every answer lands exactly once:
 * one answer.done per question for its visitor, one response record per question in the API.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { V2 } from '../helpers/api-fixtures';
import { PrivatePostgres, startInstances, type Cluster, type Instance } from '../helpers/instances';
import { sleep, type Visitor } from '../helpers/widget';

const enabled = process.env.TEST_DB === 'postgres';
const ORIGIN = 'https://example.com';
const VISITORS = 10;
const ASKS_EACH = 50;
const PENDING = VISITORS * ASKS_EACH;
const OUTAGE_MS = 20_000;
const MAX_SHARE_OF_A_CORE = 0.05;
const ANSWER = 'The warranty lasts two years.';

/**
 * A chat-completions server that sends each answer's first piece at once and the rest only when
 * `release()` is called: every answer is in flight, then finishes while the database is away.
 */
class GatedModel {
  requests = 0;
  private held: ServerResponse[] = [];
  private open = false;
  private server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      this.requests++;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'The warranty ' } }] })}\n\n`);
      if (this.open) this.finish(res);
      else this.held.push(res);
    });
  });
  port = 0;
  get url() {
    return `http://127.0.0.1:${this.port}/v1`;
  }
  private finish(res: ServerResponse) {
    res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'lasts two years.' } }] })}\n\ndata: [DONE]\n\n`);
  }
  release() {
    this.open = true;
    for (const res of this.held.splice(0)) this.finish(res);
  }
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }
  async stop() {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/**
 * A TCP door in front of PostgreSQL that accepts every connection and closes it when PostgreSQL
 * refuses (as a container's published port does while the database inside is down).
 */
class ForwardingDoor {
  private open = new Set<net.Socket>();
  private server = net.createServer((client) => {
    const upstream = net.connect(this.target, '127.0.0.1');
    for (const s of [client, upstream]) {
      this.open.add(s);
      s.once('close', () => this.open.delete(s));
    }
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  port = 0;
  constructor(readonly target: number) {}
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }
  async stop() {
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    for (const s of this.open) s.destroy();
    await closed;
  }
}

const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND; // utime, stime (fields 14, 15)
}

async function answersInFlight(inst: Instance): Promise<number> {
  const text = await (await fetch(`${inst.url}/metrics`)).text();
  return Number(/^svc_answers_in_flight\s+(\d+)/m.exec(text)?.[1] ?? NaN);
}

describe('PostgreSQL away with 500 answers pending', { skip: !enabled && 'needs TEST_DB=postgres' }, () => {
  let pg: PrivatePostgres;
  before(
    async () => {
      pg = await PrivatePostgres.create();
      // This test process creates its data in the same private database (before anything opens one).
      process.env.DATABASE_URL = pg.url;
    },
    { timeout: 60_000 },
  );
  after(
    async () => {
      const { closeDatabase } = await import('../../db/client');
      await closeDatabase().catch(() => {});
      pg?.destroy();
    },
    { timeout: 60_000 },
  );

  for (const door of ['direct', 'through a door that accepts and closes'] as const)
    describe(door, () => {
      let model: GatedModel;
      let cluster: Cluster;
      let inst: Instance;
      let forwarding: ForwardingDoor | undefined;

      before(
        async () => {
          model = await new GatedModel().start();
          if (door !== 'direct') forwarding = await new ForwardingDoor(pg.port).start();
          cluster = await startInstances(1, {
            DATABASE_URL: forwarding ? pg.url.replace(`:${pg.port}/`, `:${forwarding.port}/`) : pg.url,
            LLM_BASE_URL: model.url,
            LLM_API_KEY: 'sk-test',
            LLM_TIMEOUT_MS: '600000',
            TOKEN_RATE_PER_IP_PER_MINUTE: '100000',
            SOCKET_EVENTS_PER_10S: '100000',
            ASKS_PER_MINUTE_PER_VISITOR: '100000',
            ASKS_PER_MINUTE_PER_ADDRESS: '100000',
            ASKS_PER_MINUTE_PER_CLIENT: '100000',
          });
          inst = cluster.instances[0]!;
        },
        { timeout: 180_000 },
      );
      after(
        async () => {
          model?.release();
          await cluster?.close();
          await model?.stop();
          await forwarding?.stop();
        },
        { timeout: 60_000 },
      );

      it(`stays under ${MAX_SHARE_OF_A_CORE * 100} % of a core while away; every answer lands once when it returns`, { timeout: 240_000 }, async () => {
        const { api, createTestAccount } = await import('../helpers/builders');
        const { addKnowledge, backendToken, connectVisitor, createTestWidgetClient } = await import('../helpers/widget');
        const acct = await createTestAccount();
        await addKnowledge(acct.accountId, 'warranty.md', '# Warranty\n\nThe flux capacitor warranty lasts two years.\n');
        const client = await createTestWidgetClient(acct.accountId, ['example.com']);
        const visitors: Visitor[] = [];
        const asked: Array<{ visitor: Visitor; conversationId: string; responseIds: string[] }> = [];
        try {
          for (let v = 0; v < VISITORS; v++) {
            const issued = await backendToken(inst.url, client, `v_${randomUUID().replace(/-/g, '')}`);
            const visitor = await connectVisitor(inst.url, issued.access_token, ORIGIN);
            visitors.push(visitor);
            const first = await visitor.ok<{ conversation_id: string; response_id: string }>(
              'ask',
              { client_message_id: 'q-0', text: 'How long is the flux capacitor warranty?' },
              30_000,
            );
            const rest = await Promise.all(
              Array.from({ length: ASKS_EACH - 1 }, (_, i) =>
                visitor.ok<{ response_id: string }>(
                  'ask',
                  { conversation_id: first.conversation_id, client_message_id: `q-${i + 1}`, text: 'How long is the flux capacitor warranty?' },
                  60_000,
                ),
              ),
            );
            asked.push({ visitor, conversationId: first.conversation_id, responseIds: [first.response_id, ...rest.map((r) => r.response_id)] });
          }
          const until = async (ok: () => boolean | Promise<boolean>, what: string, ms: number) => {
            for (const end = Date.now() + ms; !(await ok()); await sleep(200))
              if (Date.now() > end)
                assert.fail(
                  `timed out waiting for ${what}; events: ${JSON.stringify(visitors.flatMap((v) => v.events.map((e) => e.type)).reduce((m, t) => ({ ...m, [t]: (m[t as keyof typeof m] ?? 0) + 1 }), {} as Record<string, number>))}\n${inst.output.slice(-3000)}`,
                );
          };
          await until(() => model.requests >= PENDING, `${PENDING} answers in the engine (${model.requests})`, 60_000);
          // Each answer's first piece has gone out as a delta: the visitors see them all streaming.
          await until(
            () => asked.every((a) => a.responseIds.every((id) => a.visitor.eventsOf(id).some((e) => e.type === 'answer.delta'))),
            'the first deltas',
            60_000,
          );

          pg.stop();
          model.release();
          // Every answer is produced, none can be stored: all of them are pending writes.
          await sleep(3000);
          assert.equal(await answersInFlight(inst), PENDING, 'every answer is waiting to be stored');
          const pid = inst.child!.pid!;
          const before = cpuSeconds(pid);
          const t0 = Date.now();
          await sleep(OUTAGE_MS);
          const used = cpuSeconds(pid) - before;
          const share = used / ((Date.now() - t0) / 1000);
          assert.equal(
            asked.flatMap((a) => a.responseIds.flatMap((id) => a.visitor.eventsOf(id).filter((e) => e.type === 'answer.done' || e.type === 'answer.error')))
              .length,
            0,
            'no answer ended while the database was away',
          );

          pg.start();
          const back = Date.now();
          await Promise.all(asked.flatMap((a) => a.responseIds.map((id) => a.visitor.finished(id, 90_000))));
          const landedMs = Date.now() - back;
          console.log(
            `database away (${door}): ${PENDING} pending answers, ${used.toFixed(2)} CPU s over ${((Date.now() - t0 - landedMs) / 1000).toFixed(1)} s away (${(share * 100).toFixed(1)} % of a core); all landed ${landedMs} ms after PostgreSQL returned`,
          );
          assert.ok(
            share < MAX_SHARE_OF_A_CORE,
            `the instance used ${(share * 100).toFixed(1)} % of a core while the database was away (${used.toFixed(2)} CPU s)`,
          );

          const get = api(inst.url, acct.key);
          for (const a of asked) {
            for (const id of a.responseIds) {
              const ends = a.visitor.eventsOf(id).filter((e) => e.type === 'answer.done' || e.type === 'answer.error');
              assert.equal(ends.length, 1, `exactly one end for ${id}: ${JSON.stringify(ends)}`);
              assert.equal(ends[0]!.type, 'answer.done', `answered, not failed: ${JSON.stringify(ends[0])}`);
              assert.equal((ends[0] as { answer: string }).answer, ANSWER);
            }
            const ids: string[] = [];
            for (let page = 1; ; page++) {
              const listed = await get(`${V2}/response?conversation_id=${a.conversationId}&pageSize=100&page=${page}`);
              assert.equal(listed.status, 200, JSON.stringify(listed.body));
              const results = listed.body.results as Array<{ response_id: string }>;
              ids.push(...results.map((r) => r.response_id));
              if (results.length < 100) break;
            }
            assert.deepEqual(ids.sort(), [...a.responseIds].sort(), 'one response record per question, none other');
          }
          assert.equal(await answersInFlight(inst), 0, 'nothing left pending');
          assert.ok(inst.running, 'the process never exited');
        } finally {
          for (const v of visitors) v.close();
        }
      });
    });
});
