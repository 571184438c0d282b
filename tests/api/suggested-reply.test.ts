/**
 * The suggested reply on /inbox/<id> (docs/contracts.md §20, docs/decisions/inbox.md) on a real
 * database: a curated answer wins, else the best passages, else the account's model grounded in
 * them (the passages when it is too slow); "none" for an off-topic message; the visitor's last
 * message is also one stored for a person; another account's conversation is not found; never stored.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { closeDatabase } from '../../db/client';
import { createAdminUser } from '../../lib/accounts/service';
import { saveModelEndpoint } from '../../lib/answers/model-endpoint';
import type { DashboardSession } from '../../lib/auth/session';
import { storeVisitorMessage } from '../../lib/conversations/handoff';
import { getLatestMessages } from '../../lib/dashboard/service';
import { SUGGESTION_BUDGET_MS, suggestReply } from '../../lib/dashboard/suggested-reply';
import { addCuratedAnswer } from '../../lib/knowledge/curated';
import { startFakeModel, type FakeModel } from '../fixtures/fake-model';
import { refusalOf as refusal } from '../helpers/app-error';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine, type TestAccount } from '../helpers/builders';
import { waitingConversation } from '../helpers/handoff';
import { newDataDir } from '../helpers/data-dir';
import { addKnowledge } from '../helpers/widget';

const POLICY = `# Returns and refunds

You can return any unused item within 30 days of delivery for a full refund. Print the return label
from your order page and drop the parcel at any post office; the refund reaches your card in five days.

# Shipping

We ship to Canada and the United States. Standard shipping takes three to five working days.
`;

let fake: FakeModel;
let silent: http.Server;
let silentUrl = '';
before(async () => {
  process.env.OUTBOUND_ALLOW_PRIVATE_NETWORKS = '1';
  if (process.env.TEST_DB === 'postgres') {
    if (!process.env.DATABASE_URL) throw new Error('TEST_DB=postgres needs DATABASE_URL');
  } else {
    delete process.env.DATABASE_URL;
    process.env.DATA_DIR = newDataDir('svc-suggest-');
  }
  fake = await startFakeModel();
  // An endpoint that never answers: the draft must not wait for it.
  silent = http.createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
});
after(async () => {
  silent.closeAllConnections();
  silent.close();
  await fake.close();
  await closeDatabase();
});

async function agentOf(acct: TestAccount): Promise<DashboardSession> {
  const email = `agent-${Math.random().toString(36).slice(2)}@example.test`;
  const u = await createAdminUser(CLI, { accountId: acct.accountId, email, password: 'agent password 1', role: 'agent', name: 'Agent' });
  return { accountId: acct.accountId, email, name: 'Agent', userId: u.user_id, sessionId: 'test', role: 'agent', mustSetUpTwoFactor: false };
}

async function conversationAsking(accountId: number, question: string) {
  const [channelId] = await newChannelIds(1);
  const line = conversationLine({ channel_id: channelId!, title: question });
  await importLines(accountId, [line, responseLine(line, { question, answer: 'I could not find that in the documents.' })]);
  return line.conversation_id;
}

async function shopAccount() {
  const acct = await createTestAccount('Suggest Co');
  await addKnowledge(acct.accountId, 'policy.md', POLICY);
  await addCuratedAnswer(acct.accountId, { questions: ['Do you ship to Canada?'], answer: 'Yes: Canada in 5 to 8 working days, duties included.' });
  return { acct, agent: await agentOf(acct) };
}

describe('suggested reply', () => {
  it('a curated answer wins; else the best passages with their sources; off-topic says none', async () => {
    const { acct, agent } = await shopAccount();
    const curated = await suggestReply(agent, { conversation_id: await conversationAsking(acct.accountId, 'Can you ship my order to Canada?') });
    assert.equal(curated.kind, 'curated');
    assert.equal(curated.draft, 'Yes: Canada in 5 to 8 working days, duties included.');
    assert.deepEqual(curated.sources, [{ title: 'Curated answer', document_id: null }]);

    const id = await conversationAsking(acct.accountId, 'How many days do I have to return an unused item?');
    const passages = await suggestReply(agent, { conversation_id: id });
    assert.equal(passages.kind, 'passages');
    assert.equal(passages.question, 'How many days do I have to return an unused item?');
    assert.match(passages.draft ?? '', /within 30 days of delivery/);
    assert.doesNotMatch(passages.draft ?? '', /^#|^>/m, 'plain text a member can send');
    assert.ok(passages.sources.length >= 1 && passages.sources.every((s) => s.title && s.document_id));

    const offTopic = await suggestReply(agent, { conversation_id: await conversationAsking(acct.accountId, 'Who won the football world cup in 1998?') });
    assert.deepEqual({ kind: offTopic.kind, draft: offTopic.draft, sources: offTopic.sources }, { kind: 'none', draft: null, sources: [] });

    // Never stored: the conversation's messages are as they were.
    const before = (await getLatestMessages(acct.accountId, id))!.messages.length;
    const t0 = Date.now();
    await suggestReply(agent, { conversation_id: id });
    assert.ok(Date.now() - t0 < 1_500, `took ${Date.now() - t0} ms`);
    assert.equal((await getLatestMessages(acct.accountId, id))!.messages.length, before);
  });

  it("the visitor's last message is also one stored for a person", async () => {
    const { acct, agent } = await shopAccount();
    const conv = await waitingConversation(acct.accountId, 'Where is my order?');
    await conv.takeOver(agent);
    await storeVisitorMessage({ accountId: acct.accountId, conversationId: conv.id }, { client_message_id: 'v-1', text: 'How do I print the return label?' });
    await conv.reply(agent, 'Let me check.');
    const s = await suggestReply(agent, { conversation_id: conv.id });
    assert.equal(s.question, 'How do I print the return label?');
    assert.equal(s.kind, 'passages');
    assert.match(s.draft ?? '', /return label/);
  });

  it("another account's conversation and a bad id are not found", async () => {
    const { agent } = await shopAccount();
    const other = await createTestAccount('Other Co');
    const theirs = await conversationAsking(other.accountId, 'How many days do I have to return an unused item?');
    for (const id of [theirs, 'not-an-id']) {
      assert.equal((await refusal(suggestReply(agent, { conversation_id: id }))).code, 'not_found');
    }
  });

  it('with a model endpoint: a draft grounded in the passages; the passages when the model is too slow', async () => {
    const { acct, agent } = await shopAccount();
    await saveModelEndpoint(CLI, acct.accountId, { baseUrl: fake.url, apiKey: '', clearKey: false, embeddingModel: '' });
    const id = await conversationAsking(acct.accountId, 'How many days do I have to return an unused item?');
    const drafted = await suggestReply(agent, { conversation_id: id });
    assert.equal(drafted.kind, 'model');
    assert.match(drafted.draft ?? '', /^Fake answer from /);
    assert.ok(drafted.sources.length >= 1);

    await saveModelEndpoint(CLI, acct.accountId, { baseUrl: silentUrl, apiKey: '', clearKey: false, embeddingModel: '' });
    const t0 = Date.now();
    const fallback = await suggestReply(agent, { conversation_id: id });
    const took = Date.now() - t0;
    assert.equal(fallback.kind, 'passages');
    assert.match(fallback.draft ?? '', /within 30 days of delivery/);
    assert.ok(took < SUGGESTION_BUDGET_MS + 300, `took ${took} ms`);
  });
});
