// One database: PostgreSQL — the address rule refuses before anything is fetched or stored
/**
 * Without OUTBOUND_ALLOW_PRIVATE_NETWORKS, a website import refuses loopback, private, link-local
 * and metadata addresses with the §16 refusal text (naming that setting) and fetches nothing.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { listWebsites, startWebsiteImport } from '../../lib/knowledge/sites';
import { refusalOf } from '../helpers/app-error';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
let site: http.Server;
let port = 0;
let hits = 0;
before(
  async () => {
    delete process.env.OUTBOUND_ALLOW_PRIVATE_NETWORKS;
    delete process.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS;
    server = await startTestServer();
    site = http.createServer((_req, res) => {
      hits++;
      res.end('<h1>Hello</h1>');
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    port = (site.address() as AddressInfo).port;
  },
  { timeout: 120_000 },
);
after(
  async () => {
    site?.close();
    await server?.close();
  },
  { timeout: 30_000 },
);

describe('website import: the outbound address rule', () => {
  const refused = () => [
    [`http://127.0.0.1:${port}/`, /127\.0\.0\.1 is a loopback address/],
    [`http://localhost:${port}/`, /host localhost resolves to a refused address/],
    [`http://[::1]:${port}/`, /::1 is a loopback address/],
    ['http://10.1.2.3/', /10\.1\.2\.3 is a private address/],
    ['http://192.168.0.10/help', /is a private address/],
    ['http://169.254.169.254/latest/meta-data/', /is a link-local address/],
  ];
  it('refuses every private address with the text that names the setting, fetching nothing', async () => {
    const { accountId } = await createTestAccount();
    for (const [url, why] of refused() as Array<[string, RegExp]>) {
      const e = await refusalOf(startWebsiteImport(accountId, url));
      assert.equal(e.code, 'invalid_request', url);
      assert.match(e.message, why, url);
      assert.match(e.message, /private, loopback, link-local and metadata addresses are refused/, url);
      assert.match(e.message, /OUTBOUND_ALLOW_PRIVATE_NETWORKS=1/, url);
    }
    assert.equal(hits, 0);
    assert.deepEqual(await listWebsites(accountId), []);
  });
});
