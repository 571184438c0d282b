/** POST /api/widget/token is rate limited per address: 429 problem+json with Retry-After (own server, low limit). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertProblem } from '../helpers/api-fixtures';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { createTestWidgetClient, tokenRequest } from '../helpers/widget';

const PER_MINUTE = 4;
let server: TestServer;
before(async () => { server = await startTestServer({ TOKEN_RATE_PER_IP_PER_MINUTE: String(PER_MINUTE) }); }, { timeout: 120_000 });
after(async () => { await server?.close(); }, { timeout: 30_000 });

describe('widget token rate limit', () => {
  it('answers 429 with Retry-After once an address used its budget, in both modes', async () => {
    const acct = await createTestAccount();
    const a = await createTestWidgetClient(acct.accountId, ['example.com']);
    const b = await createTestWidgetClient(acct.accountId, ['example.org']);
    const statuses: number[] = [];
    for (let i = 0; i < PER_MINUTE; i++) {
      const res = i % 2 === 0
        ? await tokenRequest(server.url, { client_id: a.client_id, client_secret: a.client_secret })
        : await tokenRequest(server.url, { client_id: b.client_id }, { origin: 'https://example.org' });
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, Array(PER_MINUTE).fill(200));

    for (const [body, headers] of [
      [{ client_id: a.client_id, client_secret: a.client_secret }, {}],
      [{ client_id: b.client_id }, { origin: 'https://example.org' }],
    ] as const) {
      const res = await tokenRequest(server.url, body, headers);
      assertProblem(res, 429);
      assert.equal(res.body.access_token, undefined);
      const retry = res.headers.get('retry-after');
      assert.match(retry ?? '', /^\d+$/, 'Retry-After in whole seconds');
      assert.ok(Number(retry) >= 1 && Number(retry) <= 60, `Retry-After ${retry}`);
      assert.match(res.headers.get('access-control-expose-headers') ?? '', /Retry-After/i);
    }
  });
});
