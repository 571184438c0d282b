/**
 * The app for the browser tests: a fresh embedded database, two accounts with known logins
 * and data (through the same services the seed uses), then the production server.
 * Fixture ids are written to tests/artifacts/e2e-fixtures.json for the specs.
 */
import { CLI } from '../../lib/audit/contract';
import fs from 'node:fs';
import path from 'node:path';
import { newDataDir } from '../helpers/data-dir';

const port = Number(process.env.E2E_APP_PORT ?? 3210);
// E2E_DATA_DIR reuses a data directory (a restarted server keeps its data); else a fresh one.
const reuse = !!process.env.E2E_DATA_DIR && fs.existsSync(path.join(process.env.E2E_DATA_DIR, 'pgdata'));
const dataDir = process.env.E2E_DATA_DIR ?? newDataDir('svc-e2e-');
const fixturesFile = process.env.E2E_FIXTURES ?? 'tests/artifacts/e2e-fixtures.json';
Object.assign(process.env, {
  DATA_DIR: dataDir,
  SVC_DEMO: '0',
  NODE_ENV: 'production',
  HOST: '127.0.0.1',
  PORT: String(port),
  WIDGET_TOKEN_TTL_SECONDS: process.env.WIDGET_TOKEN_TTL_SECONDS ?? '86400',
  // answer-tests.spec waits for the automatic run: seconds, not a minute.
  ANSWER_TESTS_DEBOUNCE_SECONDS: '1',
  ANSWER_TESTS_POLL_SECONDS: '0.5',
  // The webhook spec's receiver listens on 127.0.0.1.
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
  // /email's "Send a test email" and inbox.spec's customer mails go to a listener of its own (a free port, recorded in the fixtures).
  INBOUND_SMTP_PORT: '0',
});
delete process.env.DATABASE_URL;

async function main() {
  // A real SMTP server process for the team and inbox specs; what it receives is appended to E2E_MAILS.
  const { startSmtpServer } = await import('../helpers/smtp');
  const mailsFile = process.env.E2E_MAILS ?? 'tests/artifacts/e2e-mails.ndjson';
  fs.mkdirSync(path.dirname(mailsFile), { recursive: true });
  fs.writeFileSync(mailsFile, '');
  const smtp = await startSmtpServer(0, [], (m) => fs.appendFileSync(mailsFile, `${JSON.stringify(m)}\n`));
  Object.assign(process.env, { SMTP_URL: smtp.url, MAIL_RETRY_BASE_MS: '500' });
  const { createAccount, createApiKey } = await import('../../lib/accounts/service');
  const { importNdjson } = await import('../../lib/imports/service');
  const { addKnowledgeDocument } = await import('../../lib/knowledge/service');
  const { createWidgetClient } = await import('../../lib/widget-clients/service');
  const { getDb } = await import('../../db/client');
  const { allocateChannelIds } = await import('../../db/queries/channels');
  const { startServer } = await import('../../lib/server/http');
  const { randomUUID } = await import('node:crypto');

  async function account(name: string, email: string, password: string, titles: string[]) {
    const a = await createAccount({ name, adminEmail: email, adminPassword: password });
    const [web, help] = await allocateChannelIds(await getDb(), a.account_id, 2);
    const lines: string[] = [];
    const conversations: string[] = [];
    titles.forEach((title, i) => {
      const id = randomUUID();
      conversations.push(id);
      const channel = i % 3 === 0 ? help! : web!;
      const day = String(1 + (i % 28)).padStart(2, '0');
      lines.push(
        JSON.stringify({
          type: 'conversation',
          conversation_id: id,
          title,
          status: i % 5 === 0 ? 'Closed' : 'Open',
          channel_id: channel,
          channel_name: channel === web ? 'Website' : 'Help Center',
          created_at: `2026-10-${day} 09:00:00`,
          updated_at: `2026-10-${day} 09:10:00`,
        }),
      );
      for (let j = 0; j <= i % 3; j++) {
        lines.push(
          JSON.stringify({
            type: 'response',
            response_id: randomUUID(),
            conversation_id: id,
            question: `${title} — question ${j + 1}?`,
            answer: `Answer ${j + 1} about ${title.toLowerCase()}.`,
            channel_id: channel,
            created_at: `2026-10-${day} 09:0${j}:00`,
            likes: (i + j) % 4,
            dislikes: (i + j) % 3 === 0 ? 1 : 0,
            comments: j,
          }),
        );
      }
    });
    await importNdjson(a.account_id, { lines });
    const key = await createApiKey(CLI, { accountId: a.account_id, name: 'fixture key' });
    return { accountId: a.account_id, email, password, key: key.key, conversations, channels: [web, help] };
  }

  /** The inbound listener's port (a free one each start) joins the fixtures, so a spec can mail it; renamed into place, never read half-written. */
  const recordListener = (inboundSmtpPort: number | null) => {
    // A restart on a data directory whose fixtures another spec keeps elsewhere: nothing to add to.
    if (!fs.existsSync(fixturesFile)) return;
    const written = { ...JSON.parse(fs.readFileSync(fixturesFile, 'utf8')), inboundSmtpPort };
    fs.writeFileSync(`${fixturesFile}.tmp`, JSON.stringify(written, null, 2));
    fs.renameSync(`${fixturesFile}.tmp`, fixturesFile);
  };

  if (reuse) {
    const server = await startServer({ port, host: '127.0.0.1' });
    recordListener(server.inboundSmtpPort);
    console.log(`e2e app (restarted) on ${server.url}`);
    const stop = () => {
      server.close().finally(() => process.exit(0));
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    return;
  }
  const titles = Array.from(
    { length: 40 },
    (_, i) => `${['Billing', 'Password reset', 'Shipping', 'Refund', 'Café menu'][i % 5]} topic ${String(i + 1).padStart(2, '0')}`,
  );
  const alpha = await account('Alpha Inc', 'admin@alpha.test', 'alpha-password-1', titles);
  const beta = await account('Beta LLC', 'admin@beta.test', 'beta-password-1', ['Beta secret plans', 'Beta pricing question']);
  await addKnowledgeDocument(
    alpha.accountId,
    'alpha-faq.md',
    Buffer.from(
      '# Alpha FAQ\n\n## Opening hours\n\nAlpha support is open Monday to Friday from 8:00 to 18:00.\n\n## Returns\n\nYou can return any item within 30 days for a full refund.\n',
    ),
  );
  const widget = await createWidgetClient(CLI, { accountId: alpha.accountId, domains: ['127.0.0.1', 'localhost'], channelId: alpha.channels[0]! });
  const elsewhere = await createWidgetClient(CLI, { accountId: alpha.accountId, domains: ['shop.example.com'] });
  const gamma = await account('Gamma Team', 'owner@gamma.test', 'gamma-password-1', ['Gamma question']);
  const { createAdminUser } = await import('../../lib/accounts/service');
  await createAdminUser(CLI, { accountId: gamma.accountId, email: 'admin2@gamma.test', password: 'gamma-admin-pw-2', name: 'Second Admin' });
  await createAdminUser(CLI, { accountId: gamma.accountId, email: 'forgetful@gamma.test', password: 'gamma-forgot-pw-3', role: 'agent' });
  const fixtures = { alpha, beta, gamma, widget, elsewhere, dataDir, mailsFile };
  fs.mkdirSync(path.dirname(fixturesFile), { recursive: true });
  fs.writeFileSync(fixturesFile, JSON.stringify(fixtures, null, 2));

  const server = await startServer({ port, host: '127.0.0.1' });
  recordListener(server.inboundSmtpPort);
  console.log(`e2e app on ${server.url}`);
  const stop = () => {
    server.close().finally(() => {
      if (!process.env.E2E_DATA_DIR) fs.rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
