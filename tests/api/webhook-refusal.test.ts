// One database: PostgreSQL — the address rule refuses before anything is stored
/**
 * The refusal of a private webhook address, as the dashboard and the CLI get it (docs/contracts.md
 * §16 outbound addresses): it names the setting that allows such addresses, and nothing is stored.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createTestAccount } from '../helpers/builders';
import { useCliDatabase } from '../helpers/cli';
import { isAppError } from '../../lib/core/errors';
import { createWebhookEndpoint, listWebhookEndpoints } from '../../lib/webhooks/service';

const db = useCliDatabase();
after(() => db.cleanup());
delete process.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS;
delete process.env.OUTBOUND_ALLOW_PRIVATE_NETWORKS;

const refused: Array<{ url: string; reason: RegExp }> = [
  { url: 'http://127.0.0.1:8080/hook', reason: /loopback/ },
  { url: 'http://10.1.2.3/hook', reason: /private/ },
  { url: 'http://192.168.0.10/hook', reason: /private/ },
  { url: 'http://169.254.169.254/latest/meta-data', reason: /link-local/ },
  { url: 'http://[::1]/hook', reason: /loopback/ },
  { url: 'http://localhost:3000/hook', reason: /refused/ },
];

describe('webhooks: a private address is refused with the setting that allows it', () => {
  for (const c of refused) {
    it(c.url, async () => {
      const acct = await createTestAccount();
      await assert.rejects(createWebhookEndpoint(CLI, { accountId: acct.accountId, url: c.url }), (e) => {
        assert.ok(isAppError(e), String(e));
        assert.equal(e.code, 'invalid_request');
        assert.match(e.message, /^url: /);
        assert.match(e.message, c.reason);
        assert.match(e.message, /self-hosted deployment can allow them with OUTBOUND_ALLOW_PRIVATE_NETWORKS=1/);
        return true;
      });
      assert.deepEqual((await listWebhookEndpoints(acct.accountId)).endpoints, [], 'nothing stored');
    });
  }
});
