/**
 * Two instances for the handoff journey (tests/e2e/handoff-journey.spec.ts): a fresh PostgreSQL
 * database of its own (dropped at the end), one Redis with a prefix of the run, an account with two
 * members, an API key, a widget client for the host page and a webhook endpoint to the spec's
 * receiver (E2E_WEBHOOK_URL); then instance A on E2E_APP_PORT and B on E2E_APP_PORT + 1, each the
 * production server as `npm start` runs it (tests/helpers/instances.ts).
 */
import { CLI } from '../../lib/audit/contract';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Instance } from '../helpers/instances';

const portA = Number(process.env.E2E_APP_PORT);
const fixturesFile = process.env.E2E_FIXTURES!;
const database = `he_e2e_${process.pid}`;
const pgBase = process.env.E2E_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';
const env = {
  DATABASE_URL: `${pgBase}/${database}`,
  // The suite's Redis for tests (scripts/test.mjs), with a prefix of this run.
  REDIS_URL: process.env.E2E_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15',
  REDIS_PREFIX: `he:e2e-${process.pid}:`,
  SVC_DEMO: '0',
  NODE_ENV: 'production',
  // The spec's webhook receiver listens on 127.0.0.1.
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
  WIDGET_TOKEN_TTL_SECONDS: '86400',
};
const psql = (sql: string) => spawnSync('psql', [`${pgBase}/postgres`, '-qc', sql], { encoding: 'utf8' });

async function main() {
  const made = psql(`CREATE DATABASE ${database}`);
  if (made.status !== 0) throw new Error(made.stderr);
  Object.assign(process.env, env);
  const { createAccount, createAdminUser, createApiKey } = await import('../../lib/accounts/service');
  const { addKnowledgeDocument } = await import('../../lib/knowledge/service');
  const { createWidgetClient } = await import('../../lib/widget-clients/service');
  const { createWebhookEndpoint } = await import('../../lib/webhooks/service');
  const { closeDatabase } = await import('../../db/client');

  const account = await createAccount({ name: 'Acme Outdoor', adminEmail: 'owner@acme.test', adminPassword: 'acme-owner-password-1' });
  const accountId = account.account_id;
  const members = [
    { name: 'Dana Reyes', email: 'dana@acme.test', password: 'dana-password-12' },
    { name: 'Eli Park', email: 'eli@acme.test', password: 'eli-password-1234' },
  ];
  for (const m of members) await createAdminUser(CLI, { accountId, email: m.email, password: m.password, name: m.name, role: 'agent' });
  await addKnowledgeDocument(accountId, 'faq.md', Buffer.from('# Returns\n\nYou can return any tent within 30 days of delivery for a full refund.\n'));
  const widget = await createWidgetClient(CLI, { accountId, domains: ['127.0.0.1', 'localhost'] });
  const key = (await createApiKey(CLI, { accountId, name: 'journey key' })).key;
  if (process.env.E2E_WEBHOOK_URL) await createWebhookEndpoint(CLI, { accountId, url: process.env.E2E_WEBHOOK_URL });
  await closeDatabase();

  const instances = [
    new Instance('a', portA, env, fs.mkdtempSync(path.join(os.tmpdir(), 'svc-he-a-'))),
    new Instance('b', portA + 1, env, fs.mkdtempSync(path.join(os.tmpdir(), 'svc-he-b-'))),
  ];
  for (const i of instances) await i.start();
  fs.mkdirSync(path.dirname(fixturesFile), { recursive: true });
  fs.writeFileSync(fixturesFile, JSON.stringify({ widget, accountId, key, members, urls: instances.map((i) => `http://localhost:${i.port}`) }, null, 2));
  console.log(`handoff journey: A on ${portA}, B on ${portA + 1}, database ${database}`);

  const stop = async () => {
    await Promise.all(instances.map((i) => i.stop('SIGKILL').catch(() => {})));
    for (const i of instances) fs.rmSync(i.dataDir, { recursive: true, force: true });
    psql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e) => {
  console.error(e);
  psql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  process.exit(1);
});
