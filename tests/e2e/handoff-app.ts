/**
 * The app for the handoff browser spec, with a member at the keyboard: a fresh embedded database,
 * an account with a widget client for the host page and a named member, the production server, and
 * a small control server (E2E_CONTROL_PORT, 127.0.0.1 only) through which the spec acts as that
 * member. Member actions go through the same core service the inbox calls (lib/conversations/
 * handoff.ts), in this process, so their events reach the widget's socket like an inbox's would.
 */
import { CLI } from '../../lib/audit/contract';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { newDataDir } from '../helpers/data-dir';

const port = Number(process.env.E2E_APP_PORT);
const controlPort = Number(process.env.E2E_CONTROL_PORT);
const fixturesFile = process.env.E2E_FIXTURES!;
const dataDir = newDataDir('svc-e2e-handoff-');
Object.assign(process.env, { DATA_DIR: dataDir, SVC_DEMO: '0', NODE_ENV: 'production', HOST: '127.0.0.1', PORT: String(port) });
delete process.env.DATABASE_URL;

async function main() {
  const { createAccount, createAdminUser } = await import('../../lib/accounts/service');
  const { addKnowledgeDocument } = await import('../../lib/knowledge/service');
  const { createWidgetClient } = await import('../../lib/widget-clients/service');
  const handoff = await import('../../lib/conversations/handoff');
  const availability = await import('../../lib/conversations/availability');
  const { startServer } = await import('../../lib/server/http');

  const account = await createAccount({ name: 'Acme Outdoor', adminEmail: 'owner@acme.test', adminPassword: 'acme-owner-password-1' });
  const accountId = account.account_id;
  const dana = await createAdminUser(CLI, { accountId, email: 'dana@acme.test', password: 'dana-password-12', name: 'Dana Reyes', role: 'agent' });
  const member = { accountId, userId: dana.user_id, role: 'agent' as const };
  await addKnowledgeDocument(accountId, 'faq.md', Buffer.from('# Returns\n\nYou can return any tent within 30 days of delivery for a full refund.\n'));
  const widget = await createWidgetClient(CLI, { accountId, domains: ['127.0.0.1', 'localhost'] });
  fs.mkdirSync(path.dirname(fixturesFile), { recursive: true });
  fs.writeFileSync(fixturesFile, JSON.stringify({ widget, accountId }, null, 2));
  await availability.touchDashboard(member);

  const allDay = { open: true, opens: '00:00', closes: '24:00' };
  const closed = { open: false, opens: '09:00', closes: '17:00' };
  const actions: Record<string, (body: Record<string, unknown>) => Promise<unknown>> = {
    take_over: (b) => handoff.takeOver(member, { conversation_id: b.conversation_id }),
    typing: (b) => handoff.memberTyping(member, { conversation_id: b.conversation_id }),
    reply: (b) => handoff.replyAsMember(member, { conversation_id: b.conversation_id, text: b.text }),
    hand_back: (b) => handoff.handBack(member, { conversation_id: b.conversation_id }),
    resolve: (b) => handoff.resolveConversation(member, { conversation_id: b.conversation_id }),
    // Away: no office hours today or ever (`never`), or open all day with the member online again.
    away: async (b) => {
      const owner = { accountId, userId: (await ownerId()) as number, role: 'owner' as const };
      return availability.saveHandoffSettings(CLI, owner, {
        enabled: true,
        time_zone: 'UTC',
        hours: Array.from({ length: 7 }, (_, i) =>
          b.never ? closed : i === (new Date().getUTCDay() + 6) % 7 ? closed : { ...allDay, opens: '09:00', closes: '17:00' },
        ),
        away_text: 'Leave your email and we will get back to you within a day.',
      });
    },
    open: async () => {
      const owner = { accountId, userId: (await ownerId()) as number, role: 'owner' as const };
      return availability.saveHandoffSettings(CLI, owner, { enabled: true, time_zone: 'UTC', hours: Array.from({ length: 7 }, () => allDay), away_text: '' });
    },
    conversation: async (b) => {
      const { getConversationWithMessages } = await import('../../lib/conversations/service');
      return getConversationWithMessages(accountId, String(b.conversation_id), new URLSearchParams());
    },
  };
  async function ownerId() {
    const { getDb } = await import('../../db/client');
    const { getAccountOwner } = await import('../../db/queries/team');
    return (await getAccountOwner(await getDb(), accountId))?.id;
  }

  const server = await startServer({ port, host: '127.0.0.1' });
  const control = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const action = actions[(req.url ?? '').slice(1)];
      if (!action) {
        res.writeHead(404).end('{}');
        return;
      }
      action(raw ? JSON.parse(raw) : {}).then(
        (r) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(r ?? {})),
        (e: Error) => res.writeHead(409, { 'content-type': 'application/json' }).end(JSON.stringify({ error: e.message })),
      );
    });
  });
  control.listen(controlPort, '127.0.0.1');
  console.log(`handoff e2e app on ${server.url}, control on ${controlPort}`);
  const stop = () => {
    control.close();
    server.close().finally(() => {
      fs.rmSync(dataDir, { recursive: true, force: true });
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
