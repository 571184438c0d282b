import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

describe('smoke', () => {
  it('lists the records an account imported', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    await importLines(acct.accountId, [conv, responseLine(conv), responseLine(conv, { created_at: '2026-01-01 10:02:00' })]);
    const get = api(server.url, acct.key);
    const list = await get('/customer-api/v2/response');
    assert.equal(list.status, 200);
    assert.equal(list.body.count, 2);
    assert.equal(list.body.results[0].created_at, '2026-01-01 10:02:00');
    const convs = await get('/customer-api/v2/conversation');
    assert.equal(convs.body.results[0].response_count, 2);
  });
});
