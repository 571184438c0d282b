// One database: PostgreSQL — a TCP proxy in front of a PostgreSQL server
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { sql } from 'drizzle-orm';
import { getDb, rows } from '../../db/client';
import { insertMail } from '../../db/queries/mails';
import { api, createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';

/**
 * PostgreSQL only: the server talks to the database through a TCP proxy this test controls.
 * Cutting the proxy makes reads 503 with Retry-After (never a 500 or a hang); restoring it
 * recovers without a restart. A mail whose SMTP server accepted it just as the database went away
 * is recorded sent once it is back, and never sent again.
 */
const onPostgres = process.env.TEST_DB === 'postgres';

class TcpProxy {
  private server?: net.Server;
  private sockets = new Set<net.Socket>();
  port = 0;
  constructor(private readonly target: { host: string; port: number }) {}
  async start(port = 0) {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', () => r()));
    this.port = (this.server!.address() as net.AddressInfo).port;
  }
  async stop() {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

describe('database outage', { skip: !onPostgres && 'PostgreSQL only' }, () => {
  let server: TestServer;
  let proxy: TcpProxy;
  // An SMTP server that cuts the database just before it accepts a mail (with its 250): the sender then cannot record it sent.
  const received: string[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push(Buffer.concat(chunks).toString('utf8'));
        const port = proxy.port;
        void proxy
          .stop()
          .then(() => cb())
          .then(() => new Promise((r) => setTimeout(r, 1500)))
          .then(() => proxy.start(port));
      });
    },
  });
  before(async () => {
    const url = new URL(process.env.DATABASE_URL!);
    proxy = new TcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    await proxy.start();
    url.host = `127.0.0.1:${proxy.port}`;
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
    server = await startTestServer({
      DATABASE_URL: url.toString(),
      SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as net.AddressInfo).port}`,
      MAIL_LEASE_SECONDS: '6',
    });
  });
  after(async () => {
    await server?.close();
    await proxy?.stop();
    await new Promise((r) => smtp.close(() => r(undefined)));
  });

  it('answers 503 with Retry-After while the database is away, and recovers by itself', async () => {
    const acct = await createTestAccount();
    const get = api(server.url, acct.key);
    assert.equal((await get('/customer-api/v2/response')).status, 200);
    const port = proxy.port;
    await proxy.stop();
    const started = Date.now();
    const down = await get('/customer-api/v2/response');
    assert.equal(down.status, 503, JSON.stringify(down.body));
    assert.equal(down.headers.get('content-type'), 'application/problem+json');
    assert.ok(Number(down.headers.get('retry-after')) > 0);
    assert.ok(Date.now() - started < 15_000, 'the outage answer must not hang');
    // The export (a COPY on a reserved connection on PostgreSQL) fails before its first byte: a problem+json 503 too.
    for (const path of ['/customer-api/v2/response/export', '/customer-api/v2/conversation/export?format=csv']) {
      const t0 = Date.now();
      const exportDown = await get(path);
      assert.equal(exportDown.status, 503, `${path} ${JSON.stringify(exportDown.body)}`);
      assert.equal(exportDown.headers.get('content-type'), 'application/problem+json');
      assert.ok(Date.now() - t0 < 15_000, "the export's outage answer must not hang");
    }
    // Unready (taken out of rotation), not dead (never restarted) while PostgreSQL is away.
    assert.equal((await get('/readyz')).status, 503);
    assert.equal((await get('/healthz')).status, 200);
    await proxy.start(port);
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await get('/customer-api/v2/response')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(status, 200);
    assert.equal((await get('/customer-api/v2/response/export')).status, 200);
  });

  it('records a mail sent just as the database went away once it is back, and never sends it again', { timeout: 30_000 }, async () => {
    const acct = await createTestAccount();
    const db = await getDb();
    const subject = `Outage ${Date.now()}`;
    await insertMail(db, acct.accountId, { to: 'carla@example.org', subject, text: 'Hello.', html: '<p>Hello.</p>' });
    // This process reads through the proxy too: while it is cut, no status.
    const status = async () =>
      (await rows<{ status: string }>(db, sql`SELECT status FROM mails WHERE account_id = ${acct.accountId} AND subject = ${subject}`).catch(() => []))[0]
        ?.status;
    for (const started = Date.now(); Date.now() - started < 15_000 && (await status()) !== 'sent'; ) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await status(), 'sent', 'recorded sent once the database is back');
    // A sent mail is never claimed again; one recorded only after its lease lapsed (6 s) would have been sent twice by now.
    assert.equal(received.filter((m) => m.includes(subject)).length, 1, 'the mail was sent once');
  });
});
