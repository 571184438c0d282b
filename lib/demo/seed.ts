import { SYSTEM } from '../audit/contract';
import { randomBytes, randomUUID } from 'node:crypto';
import { createAccount, createApiKey, createAdminUser } from '../accounts/service';
import { getDb } from '../../db/client';
import { getSetting, putSetting } from '../../db/queries/settings';
import { getEnv } from '../env';
import { importNdjson } from '../imports/service';
import { addKnowledgeDocument } from '../knowledge/service';
import { getConversationWithMessages } from '../conversations/service';
import { attachFileToMessage } from '../uploads/service';
import { createWidgetClient } from '../widget-clients/service';
import { listAccountMembers } from '../team/service';
import { seedEmailDemo } from './email';
import { seedHandoffDemo } from './handoff';
import { addAnswerTest, runAnswerTests } from '../answer-tests/service';

const TOPICS: Array<[string, string]> = [
  ['How do I reset my password?', 'Open **Settings → Security** and choose *Reset password*. We email you a link that is valid for one hour.'],
  ['What are your opening hours?', 'Our support team answers Monday to Friday, 8:00–18:00 CET. The chatbot is available around the clock.'],
  ['Can I export my data?', 'Yes. Under **Account → Export** you can download all records as CSV or JSON.'],
  ['Do you offer a discount for non-profits?', 'Registered non-profits get 30% off every plan; contact sales with your registration number.'],
  ['How do I change my billing address?', 'Go to **Billing → Details**, edit the address and save. The next invoice uses it.'],
  ['Is my data stored in the EU?', 'All customer data is stored in data centres in Frankfurt and Amsterdam.'],
  ['How can I cancel my subscription?', 'You can cancel at any time under **Billing → Plan**; the plan runs until the end of the period.'],
  ['Which payment methods do you accept?', 'We accept credit cards, SEPA direct debit and invoices for annual plans.'],
  ['Where is my order?', 'Your order status and tracking link are on the **Orders** page once it has shipped.'],
  ['Can I use the café Wi-Fi guide offline?', 'Yes, the CAFÉ guide can be downloaded as a PDF from the help centre.'],
];

function ts(d: Date): string {
  return d.toISOString().slice(0, 19).replace('T', ' ');
}

/** NDJSON lines of a small, believable account: two channels, 24 conversations, ~75 responses (five end in a visitor's thanks). */
export function demoRecords(channelIds: [number, number], now = new Date()): string[] {
  const lines: string[] = [];
  const channels = [
    [channelIds[0], 'Website'],
    [channelIds[1], 'Help Center'],
  ] as const;
  for (let i = 0; i < 24; i++) {
    const [channelId, channelName] = channels[i % 3 === 0 ? 1 : 0]!;
    const start = new Date(now.getTime() - (24 - i) * 26 * 3600_000);
    const id = randomUUID();
    const n = 1 + ((i * 7) % 5);
    const first = TOPICS[i % TOPICS.length]!;
    // A few visitors thank the bot at the end: /insights shows AI-resolved conversations confirmed that way.
    const thanks = [1, 5, 11, 20, 22].includes(i);
    lines.push(
      JSON.stringify({
        type: 'conversation',
        conversation_id: id,
        title: first[0],
        status: i % 4 === 0 ? 'Closed' : 'Open',
        channel_id: channelId,
        channel_name: channelName,
        created_at: ts(start),
        updated_at: ts(new Date(start.getTime() + (thanks ? n + 1 : n) * 60_000)),
      }),
    );
    for (let j = 0; j < n; j++) {
      const [question, answer] = TOPICS[(i + j * 3) % TOPICS.length]!;
      lines.push(
        JSON.stringify({
          type: 'response',
          response_id: randomUUID(),
          conversation_id: id,
          question,
          answer,
          channel_id: channelId,
          created_at: ts(new Date(start.getTime() + j * 60_000)),
          likes: (i + j) % 3 === 0 ? 1 : 0,
          dislikes: (i + j) % 7 === 0 ? 1 : 0,
          comments: (i + j) % 5 === 0 ? 1 : 0,
        }),
      );
    }
    if (thanks) {
      lines.push(
        JSON.stringify({
          type: 'response',
          response_id: randomUUID(),
          conversation_id: id,
          question: 'Great, thanks!',
          answer: 'You are welcome! Anything else I can help with?',
          channel_id: channelId,
          created_at: ts(new Date(start.getTime() + n * 60_000)),
          likes: 0,
          dislikes: 0,
          comments: 0,
        }),
      );
    }
  }
  return lines;
}

export type DemoAccount = {
  account_id: number;
  admin_email: string;
  admin_password: string;
  api_key: string;
  key_id: string;
  /** A member with the `agent` role (docs/contracts.md §13), to see what an agent sees. */
  agent_email: string;
  agent_password: string;
  widget_client_id: string;
  widget_client_secret: string;
  conversations: number;
  responses: number;
  /** The demo's channels (7 "Website" and 8 "Help Center", as README's examples use) and its busiest conversation. */
  channel_ids: [number, number];
  conversation_id: string;
  /** A file attached to the first question of that conversation (README's download example). */
  attachment_id: string;
  /** The handoff's demo conversations (lib/demo/handoff.ts): Waiting, handled by the agent, resolved and rated. */
  handoff: { waiting: string; handled: string; resolved: string };
  /** The account's address for customers' mail (lib/demo/email.ts: two mails received there). */
  email_address: string;
};

/** The channel ids README's examples use; an account that cannot have them gets service-allocated ones. */
export const DEMO_CHANNEL_IDS: [number, number] = [7, 8];

function busiestConversation(lines: string[]): string {
  const counts = new Map<string, number>();
  for (const l of lines) {
    const r = JSON.parse(l) as { type: string; conversation_id: string };
    if (r.type === 'response') counts.set(r.conversation_id, (counts.get(r.conversation_id) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1])[0]![0];
}

/** A few answer tests that pass on the demo's knowledge base (docs/contracts.md §20), run once so /bot/tests shows results. */
async function seedAnswerTests(accountId: number, faqId: string): Promise<void> {
  const owner = { accountId, role: 'owner' as const };
  await addAnswerTest(owner, { question: 'How do I reset my password?', expect: 'answers from', source: `document:${faqId}` });
  await addAnswerTest(owner, { question: 'What are your opening hours?', expect: 'mentions', value: 'Monday to Friday' });
  await addAnswerTest(owner, { question: 'Do non-profits get a discount?', expect: 'mentions', value: '30%' });
  await addAnswerTest(owner, { question: 'What will the weather be in Tokyo tomorrow?', expect: 'declines' });
  await runAnswerTests(owner, 'demo');
}

/** Creates the demo account through the same services every other account uses. */
export async function seedDemoAccount(): Promise<DemoAccount> {
  const suffix = randomBytes(3).toString('hex');
  const email = `demo-${suffix}@svc.local`;
  const password = randomBytes(9).toString('base64url');
  const account = await createAccount({ name: 'Demo Company', adminEmail: email, adminPassword: password });
  // Channel ids belong to their account (docs/contracts.md §3), so every demo account has README's 7 and 8.
  const channels = DEMO_CHANNEL_IDS;
  const lines = demoRecords(channels);
  const counts = await importNdjson(account.account_id, { lines });
  const [a] = channels;
  const key = await createApiKey(SYSTEM, { accountId: account.account_id, name: 'Demo key' });
  const agentEmail = `agent-${suffix}@svc.local`;
  const agentPassword = randomBytes(9).toString('base64url');
  const agent = await createAdminUser(SYSTEM, { accountId: account.account_id, email: agentEmail, password: agentPassword, role: 'agent', name: 'Demo Agent' });
  const faq = TOPICS.map(([q, a]) => `## ${q}\n\n${a.replace(/\*\*|\*/g, '')}`).join('\n\n');
  const kb = await addKnowledgeDocument(account.account_id, 'demo-faq.md', Buffer.from(`# Demo Company FAQ\n\n${faq}\n`));
  await seedAnswerTests(account.account_id, kb.document_id);
  const widget = await createWidgetClient(SYSTEM, { accountId: account.account_id, domains: ['localhost', '127.0.0.1'], channelId: a });
  const owner = (await listAccountMembers(account.account_id)).members.find((m) => m.role === 'owner')!;
  const handoff = await seedHandoffDemo({
    accountId: account.account_id,
    ownerId: owner.user_id,
    agentId: agent.user_id,
    widget: { clientId: widget.client_id, channelId: a },
  });
  const { address: emailAddress } = await seedEmailDemo(account.account_id);
  const conversationId = busiestConversation(lines);
  const { messages } = (await getConversationWithMessages(account.account_id, conversationId, new URLSearchParams())) as {
    messages: Array<{ message_id: string }>;
  };
  const attachmentId = await attachFileToMessage(account.account_id, {
    conversationId,
    messageId: messages[0]!.message_id,
    filename: 'order-note.txt',
    contentType: 'text/plain',
    bytes: Buffer.from('Order 4711: shipped on Monday with tracking number DE-123-456.\n'),
  });
  return {
    account_id: account.account_id,
    admin_email: email,
    admin_password: password,
    api_key: key.key,
    key_id: key.key_id,
    agent_email: agentEmail,
    agent_password: agentPassword,
    widget_client_id: widget.client_id,
    widget_client_secret: widget.client_secret,
    ...counts,
    channel_ids: channels,
    conversation_id: conversationId,
    attachment_id: attachmentId,
    handoff,
    email_address: emailAddress,
  };
}

/** The settings key under which the last server started records the address it answers on. */
const SERVER_URL_SETTING = 'server_url';

/** Called by a server once it listens, so `seed --demo` (another process) prints where it runs. */
export async function recordServerAddress(url: string): Promise<void> {
  await putSetting(await getDb(), SERVER_URL_SETTING, url);
}

/**
 * The address to print for the demo: `explicit` (the CLI's --url), else NEXTAUTH_URL, else the
 * address the last server started on this database recorded, else HOST:PORT of this process.
 */
export async function serverAddress(explicit?: string): Promise<string> {
  const env = getEnv();
  if (explicit) return explicit.replace(/\/+$/, '');
  if (env.NEXTAUTH_URL) return env.NEXTAUTH_URL.replace(/\/+$/, '');
  const recorded = await getSetting(await getDb(), SERVER_URL_SETTING);
  if (recorded) return recorded;
  const host = env.HOST === '0.0.0.0' || env.HOST === '::' ? 'localhost' : env.HOST.includes(':') ? `[${env.HOST}]` : env.HOST;
  return `http://${host}:${env.PORT}`;
}

/** One line a newcomer pastes to send the demo account a customer's mail (curl speaks SMTP). */
export function demoMailCommand(address: string, smtpPort: number): string {
  const mail = `From: you@example.com\\r\\nTo: ${address}\\r\\nSubject: Shipping to Norway\\r\\n\\r\\nHow long does shipping to Norway take?\\r\\n`;
  return `printf '${mail}' | curl -sS smtp://127.0.0.1:${smtpPort} --mail-from you@example.com --mail-rcpt ${address} -T -`;
}

export function demoCurl(baseUrl: string, apiKey: string): string {
  return `curl -H "Authorization: Bearer ${apiKey}" "${baseUrl}/customer-api/v2/response?resultsPerPage=5"`;
}

/** The shell lines that make README's Customer API examples run as printed against the demo. */
export function demoShellVariables(baseUrl: string, demo: Pick<DemoAccount, 'api_key' | 'conversation_id' | 'channel_ids' | 'attachment_id'>): string[] {
  const lines = [`KEY=${demo.api_key}`, `BASE=${baseUrl}/customer-api/v2`, `CONVERSATION=${demo.conversation_id}`, `ATTACHMENT=${demo.attachment_id}`];
  if (demo.channel_ids.join() !== DEMO_CHANNEL_IDS.join())
    lines.push(`# this demo's channels are ${demo.channel_ids.join(' and ')} (README's examples use 7 and 8)`);
  return lines;
}
