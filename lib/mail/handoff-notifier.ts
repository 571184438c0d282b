import { getDb, type Db } from '../../db/client';
import {
  claimUnseenReplies,
  claimWaitingConversation,
  listConversationsWithUnseenReplies,
  listDueWaitingConversations,
  listMembersNotifiedByEmail,
} from '../../db/queries/handoff-mail';
import { insertMail } from '../../db/queries/mails';
import { dashboardUrl } from '../auth/session-secret';
import { conversationSummary, displayName, type ConversationSummary } from '../conversations/handoff';
import { getLogger } from '../core/logger';
import { processLoop } from '../core/loop';
import { getEnv } from '../env';
import { unseenRepliesMail, waitingConversationMail } from './templates';
import { wakeMailWorker } from './worker';

/**
 * The handoff's mail, one loop on every instance (docs/decisions/handoff-mail.md): members are
 * mailed about a conversation Waiting for HANDOFF_EMAIL_AFTER_SECONDS (once per waiting episode),
 * visitors about member replies their widget has not shown for HANDOFF_REPLY_EMAIL_AFTER_SECONDS
 * (once per message, one mail per conversation). Each mail is written to the durable outbox in the transaction that claims its
 * cause with FOR UPDATE SKIP LOCKED, so two instances never write the same mail.
 */
const BATCH = 50;

/** Mails the members about conversations waiting too long; returns how many conversations it claimed. */
export async function mailWaitingConversations(afterSeconds = getEnv().HANDOFF_EMAIL_AFTER_SECONDS): Promise<number> {
  const db = await getDb();
  let claimed = 0;
  await eachConversation(await listDueWaitingConversations(db, afterSeconds, BATCH), 'waiting mail', async (c) => {
    const members = await listMembersNotifiedByEmail(db, c.account_id);
    // Read before the claim's transaction: the embedded database has one connection.
    const summary = members[0]
      ? await conversationSummary({ accountId: c.account_id, userId: members[0].id, role: members[0].role }, { conversation_id: c.id })
      : null;
    const wrote = await inTransaction(db, async (tx) => {
      const w = await claimWaitingConversation(tx, c.account_id, c.id, afterSeconds);
      if (!w) return -1;
      const minutes = Math.floor((Date.now() - Date.parse(w.waiting_since)) / 60_000);
      for (const m of members) await insertMail(tx, waitingConversationMail(m.email, waitingMailFacts(w, minutes, summary)));
      return members.length;
    });
    if (wrote >= 0) claimed++;
  });
  return claimed;
}

const waitingMailFacts = (w: { id: string; title: string; account_name: string }, minutes: number, s: ConversationSummary | null) => ({
  accountName: w.account_name,
  title: w.title,
  minutes,
  asked: s?.asked ?? [],
  answers: s?.answers ?? [],
  sources: (s?.sources ?? []).map((x) => x.title),
  url: dashboardUrl(`/inbox/${w.id}`),
});

/** Mails visitors the member replies their widget has not shown; returns how many conversations it mailed. */
export async function mailUnseenReplies(afterSeconds = getEnv().HANDOFF_REPLY_EMAIL_AFTER_SECONDS): Promise<number> {
  const db = await getDb();
  let mailed = 0;
  await eachConversation(await listConversationsWithUnseenReplies(db, afterSeconds, BATCH), 'reply mail', async (c) => {
    const wrote = await inTransaction(db, async (tx) => {
      const r = await claimUnseenReplies(tx, c.account_id, c.id, afterSeconds);
      if (!r) return false;
      const replies = r.replies.map((m) => ({ name: displayName({ name: m.author_name, email: null }), text: m.text }));
      await insertMail(tx, unseenRepliesMail(r.visitor_email, { accountName: r.account_name, replies }));
      return true;
    });
    if (wrote) mailed++;
  });
  return mailed;
}

/** One conversation's failure is logged and the others go on (it is due again at the next pass). */
async function eachConversation(list: Array<{ id: string; account_id: number }>, what: string, fn: (c: { id: string; account_id: number }) => Promise<void>) {
  for (const c of list) {
    try {
      await fn(c);
    } catch (e) {
      getLogger().warn({ err: e, conversationId: c.id }, `handoff notifier: ${what} of conversation ${c.id} not written; retrying at the next pass`);
    }
  }
}

async function inTransaction<T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  const result = await db.transaction(async (tx) => fn(tx as unknown as Db));
  wakeMailWorker();
  return result;
}

/** One pass of both duties (the loop's body). */
export async function runHandoffMailPass(): Promise<{ waiting: number; replies: number }> {
  return { waiting: await mailWaitingConversations(), replies: await mailUnseenReplies() };
}

const notifier = processLoop('svc.handoffNotifier');

/** The poll: a quarter of the shorter delay, between 0.25 and 5 s (a mail is at most that late). */
export function handoffPollMs(env = getEnv()): number {
  return Math.min(5000, Math.max(250, Math.min(env.HANDOFF_EMAIL_AFTER_SECONDS, env.HANDOFF_REPLY_EMAIL_AFTER_SECONDS) * 250));
}

export function startHandoffNotifier(): void {
  notifier.start({
    pollMs: handoffPollMs(),
    step: async () => {
      await runHandoffMailPass();
      return false;
    },
    onDown: (e) => getLogger().error({ err: e }, 'handoff notifier: a pass failed; retrying'),
  });
}

export async function stopHandoffNotifier(): Promise<void> {
  await notifier.stop();
}
