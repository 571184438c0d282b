// One database: PostgreSQL — the address rule refuses before anything is stored
/**
 * The account's model endpoint obeys the outbound address rule (docs/contracts.md §16): with
 * OUTBOUND_ALLOW_PRIVATE_NETWORKS unset, saving or testing a loopback, private, link-local or
 * metadata address is refused with the message that names the setting, nothing is stored, a host
 * name's refusal never says what it resolved to, and an endpoint whose address turned private
 * after saving gets no request (the visitor sees the neutral message).
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { closeDatabase } from '../../db/client';
import { answerEngine } from '../../lib/answers/engines';
import { MODEL_UNAVAILABLE } from '../../lib/answers/engines/openai';
import { saveModelEndpoint, testModelEndpoint } from '../../lib/answers/model-endpoint';
import { getModelEndpointView, storeModelEndpoint } from '../../lib/bot/settings';
import { isAppError } from '../../lib/core/errors';
import { PRIVATE_REFUSED, UnsafeAddressError } from '../../lib/net/address';
import { outboundFetch } from '../../lib/net/outbound-fetch';
import { startFakeModel } from '../fixtures/fake-model';
import { createTestAccount } from '../helpers/builders';
import { newDataDir } from '../helpers/data-dir';
import { addKnowledge } from '../helpers/widget';

let dataDir: string | undefined;
before(() => {
  delete process.env.OUTBOUND_ALLOW_PRIVATE_NETWORKS;
  delete process.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS;
  process.env.SVC_DEMO = '0';
  if (process.env.TEST_DB !== 'postgres') {
    delete process.env.DATABASE_URL;
    dataDir = newDataDir('svc-test-');
    process.env.DATA_DIR = dataDir;
  }
});
after(
  async () => {
    await closeDatabase();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  },
  { timeout: 30_000 },
);

const REFUSED: Array<[string, string]> = [
  ['http://127.0.0.1:11434/v1', 'Base URL: 127.0.0.1 is a loopback address; '],
  ['http://10.0.0.5/v1', 'Base URL: 10.0.0.5 is a private address; '],
  ['http://192.168.1.20:8000/v1', 'Base URL: 192.168.1.20 is a private address; '],
  ['http://169.254.169.254/latest', 'Base URL: 169.254.169.254 is a link-local address; '],
  ['http://[::1]:8080/v1', 'Base URL: ::1 is a loopback address; '],
  ['http://[fd00:ec2::254]/v1', 'Base URL: fd00:ec2::254 is a private (unique local) address; '],
  ['http://localhost:11434/v1', 'Base URL: host localhost resolves to a refused address; '],
];

describe('model endpoint address safety', () => {
  for (const [url, start] of REFUSED) {
    it(`refuses ${url} on save and on Test connection, naming the setting`, async () => {
      const acct = await createTestAccount();
      const input = { baseUrl: url, apiKey: 'sk-x', clearKey: false, embeddingModel: '' };
      await assert.rejects(saveModelEndpoint(CLI, acct.accountId, input), (e: unknown) => {
        assert.ok(isAppError(e) && e.code === 'invalid_request', String(e));
        assert.equal(e.message, `${start}${PRIVATE_REFUSED}.`);
        assert.match(e.message, /OUTBOUND_ALLOW_PRIVATE_NETWORKS=1/);
        assert.deepEqual(
          e.errors?.map((x) => x.param),
          ['base_url'],
        );
        if (url.includes('localhost')) assert.ok(!e.message.includes('127.0.0.1') && !e.message.includes('::1'), 'never what a name resolved to');
        return true;
      });
      assert.equal((await getModelEndpointView(acct.accountId)).baseUrl, '', 'nothing stored');
      const tested = await testModelEndpoint(acct.accountId, input);
      assert.deepEqual(tested, { works: false, checks: [{ name: 'Address', ok: false, detail: `${start}${PRIVATE_REFUSED}.` }] });
    });
  }

  it("the SDK's fetch checks every request itself: a loopback URL is refused before any connection", async () => {
    const fake = await startFakeModel();
    try {
      const fetch = outboundFetch({ maxBytes: 1024, timeoutMs: 5000, checkAddress: true });
      for (const url of [`${fake.url}/chat/completions`, fake.url.replace('127.0.0.1', 'localhost')])
        await assert.rejects(
          fetch(url, { method: 'POST', body: '{}' }),
          (e: unknown) => e instanceof UnsafeAddressError && e.message.includes(PRIVATE_REFUSED),
        );
      assert.equal(fake.requests.length, 0);
    } finally {
      await fake.close();
    }
  });

  it('an endpoint stored before its address became refused gets no request; the visitor sees the neutral message', async () => {
    const fake = await startFakeModel();
    try {
      const acct = await createTestAccount();
      await addKnowledge(acct.accountId, 'faq.md', '# FAQ\n\n## Deposit\n\nA deposit of 100 euros per rented item is held on your card.\n');
      // As if the name had resolved to a public address when it was saved.
      await storeModelEndpoint(CLI, acct.accountId, { baseUrl: fake.url, apiKeySealed: null, embeddingModel: '' });
      await assert.rejects(
        answerEngine().answer({
          accountId: acct.accountId,
          conversationId: randomUUID(),
          question: 'How much is the deposit per rented item?',
          signal: AbortSignal.timeout(10_000),
        }),
        (e: Error) => e.message === MODEL_UNAVAILABLE,
      );
      assert.equal(fake.requests.length, 0);
    } finally {
      await fake.close();
    }
  });
});
