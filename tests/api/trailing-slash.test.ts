// One database: PostgreSQL — routing of paths and queries
/**
 * A Customer API path with a trailing slash is the same operation, answered by the direct door
 * (no redirect), with a key or the dashboard session, whatever the length of its query; a query
 * beyond the server's request-line limit is a clean 431, never a reset connection.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { V2 } from '../helpers/api-fixtures';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn } from '../helpers/signin';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

/** Sends one raw request line and returns the whole answer (status line, headers, body) as text. */
function rawGet(path: string, headers: Record<string, string>): Promise<string> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('error', reject);
    socket.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    const lines = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n${lines}\r\n`);
  });
}

const bodyOf = (answer: string) => answer.slice(answer.indexOf('\r\n\r\n') + 4);
const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);

describe('trailing slash', () => {
  it('answers the same operation as the path without it, for a short and a long escaped query', { timeout: 60_000 }, async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    await importLines(acct.accountId, [conv, responseLine(conv, { question: 'a % b?', answer: 'yes' })]);
    const auth = { authorization: `Bearer ${acct.key}` };
    // ~12 KB of percent escapes (Next's 308 re-escaped each one and reset such connections).
    const long = `query=${'%25'.repeat(10)}&filler=${'%41%42'.repeat(2000)}`;
    const cases = [
      [`${V2}/response/`, `${V2}/response`],
      [`${V2}/response/?query=%25`, `${V2}/response?query=%25`],
      [`${V2}/response/?${long}`, `${V2}/response?${long}`],
      [`${V2}/conversation/${conv.conversation_id}/`, `${V2}/conversation/${conv.conversation_id}`],
      [`${V2}/response/export/?format=csv`, `${V2}/response/export?format=csv`],
      [`${V2}/response//?${long}`, `${V2}/response?${long}`],
    ];
    for (const [slashed, plain] of cases) {
      const a = await rawGet(slashed!, auth);
      const b = await rawGet(plain!, auth);
      assert.equal(statusOf(a), 200, `${slashed!.slice(0, 80)}: ${a.slice(0, 300)}`);
      const strip = (s: string) => s.replace(/"request_id":"[^"]*"/g, '').replace(/\d{8}-\d{6}/g, '');
      assert.equal(strip(bodyOf(a)), strip(bodyOf(b)), slashed!.slice(0, 80));
    }
    // Unknown paths and bad parameters are the same problem+json, slash or not.
    const unknown = await rawGet(`${V2}/nothing/?${long}`, auth);
    assert.equal(statusOf(unknown), 404);
    assert.match(unknown, /application\/problem\+json/i);
    const bad = await rawGet(`${V2}/response/?page=0&${long}`, auth);
    assert.equal(statusOf(bad), 400);
    assert.match(bodyOf(bad), /"param":"page"/);
    // Without credentials: the same 401 as the path without the slash.
    assert.equal(statusOf(await rawGet(`${V2}/response/?${long}`, {})), 401);
    // The dashboard session works there too.
    const login = await signIn(server.url, acct.email, acct.password);
    assert.ok(login.ok, String(login.error));
    const viaCookie = await rawGet(`${V2}/response/?${long}`, { cookie: login.cookie! });
    assert.equal(statusOf(viaCookie), 200, viaCookie.slice(0, 300));
  });

  it('a 60 KB query is refused cleanly (431), not a reset connection', async () => {
    const acct = await createTestAccount();
    const answer = await rawGet(`${V2}/response/?query=${'%41'.repeat(20_000)}`, { authorization: `Bearer ${acct.key}` });
    assert.equal(statusOf(answer), 431, answer.slice(0, 200));
  });
});
