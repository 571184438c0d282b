import { getDb, type Db } from '../../db/client';
import {
  announceDueWaitingConversations,
  claimMembersForWaitingMail,
  claimUnseenReplies,
  getAccountName,
  listAccountsWithWaitingMail,
  listAnnouncedWaiting,
  listConversationsWithUnseenReplies,
  listMembersNotifiedByEmail,
  listWaitingMailCandidates,
  lockAccountWaitingMail,
} from '../../db/queries/handoff-mail';
import { randomUUID } from 'node:crypto';
import { ensureConversationTag, setInboundLocal } from '../../db/queries/inbound-mail';
import { insertMail, type MailInput } from '../../db/queries/mails';
import { addressOf, freshLocal, freshTag } from './address';
import { dashboardUrl } from '../auth/session-secret';
import { conversationSummary, type ConversationSummary } from '../conversations/inbox-views';
import { displayName } from '../conversations/handoff';
import { getLogger } from '../core/logger';
import { processLoop } from '../core/loop';
import { getEnv } from '../env';
import { unseenRepliesMail, waitingConversationMail, waitingDigestMail } from './templates';
import { wakeMailWorker } from './worker';

/**
 * The handoff's mail, one loop on every instance (docs/decisions/handoff-mail.md): members are
 * mailed about conversations Waiting for HANDOFF_EMAIL_AFTER_SECONDS, each member at most once per
 * HANDOFF_EMAIL_MEMBER_WINDOW_SECONDS (one conversation: its summary; more: a digest listing them);
 * visitors about member replies their widget has not shown for HANDOFF_REPLY_EMAIL_AFTER_SECONDS
 * (once per message, one mail per conversation). Each mail is written to the durable outbox in the
 * transaction that claims its cause, so two instances never write the same mail.
 */
const BATCH = 50;
/** Conversations a digest names (the rest are counted); episodes announced per account and pass. */
export const DIGEST_LISTED = 50;
const ANNOUNCE_PER_PASS = 1000;
const SUMMARIES = 3;

/** Mails the members about conversations waiting too long; returns how many waiting mails it wrote. */
export async function mailWaitingConversations(
  afterSeconds = getEnv().HANDOFF_EMAIL_AFTER_SECONDS,
  windowSeconds = getEnv().HANDOFF_EMAIL_MEMBER_WINDOW_SECONDS,
): Promise<number> {
  const db = await getDb();
  let written = 0;
  for (const accountId of await listAccountsWithWaitingMail(db, afterSeconds, windowSeconds, BATCH)) {
    try {
      written += await mailWaitingOfAccount(db, accountId, afterSeconds, windowSeconds);
    } catch (e) {
      getLogger().warn({ err: e, accountId }, `handoff notifier: waiting mail of account ${accountId} not written; retrying at the next pass`);
    }
  }
  return written;
}

async function mailWaitingOfAccount(db: Db, accountId: number, afterSeconds: number, windowSeconds: number): Promise<number> {
  // Read before the transaction: the embedded database has one connection.
  const [reader] = await listMembersNotifiedByEmail(db, accountId);
  const summaries = new Map<string, ConversationSummary>();
  if (reader) {
    for (const id of await listWaitingMailCandidates(db, accountId, afterSeconds, SUMMARIES)) {
      summaries.set(id, await conversationSummary({ accountId, userId: reader.id, role: reader.role }, { conversation_id: id }));
    }
  }
  const accountName = await getAccountName(db, accountId);
  return inTransaction(db, async (tx) => {
    await lockAccountWaitingMail(tx, accountId);
    await announceDueWaitingConversations(tx, accountId, afterSeconds, ANNOUNCE_PER_PASS);
    let n = 0;
    for (const m of await claimMembersForWaitingMail(tx, accountId, windowSeconds)) {
      const { total, conversations } = await listAnnouncedWaiting(tx, accountId, m.since, DIGEST_LISTED);
      const [one] = conversations;
      if (!one) continue;
      const mail =
        total === 1
          ? waitingConversationMail(m.email, waitingMailFacts(accountName, one, summaries.get(one.id) ?? null))
          : waitingDigestMail(m.email, {
              accountName,
              total,
              conversations: conversations.map((c) => ({ title: c.title, minutes: minutesSince(c.waiting_since), url: dashboardUrl(`/inbox/${c.id}`) })),
              url: dashboardUrl('/inbox'),
            });
      await insertMail(tx, accountId, mail);
      n++;
    }
    return n;
  });
}

const minutesSince = (utc: string) => Math.max(0, Math.floor((Date.now() - Date.parse(`${utc.replace(' ', 'T')}Z`)) / 60_000));

const waitingMailFacts = (accountName: string, w: { id: string; title: string; waiting_since: string }, s: ConversationSummary | null) => ({
  accountName,
  title: w.title,
  minutes: minutesSince(w.waiting_since),
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
      const replyTo = await replyAddressOf(tx, c.account_id, c.id);
      const mail = unseenRepliesMail(r.visitor_email, { accountName: r.account_name, replies, answerable: replyTo !== null });
      await insertMail(tx, c.account_id, { ...mail, thread: threadOf(c.id, r.account_name, replyTo) });
      return true;
    });
    if (wrote) mailed++;
  });
  return mailed;
}

/**
 * Where the visitor's answer to that mail goes (docs/contracts.md §17 "members"): the conversation's
 * tagged address, when this server receives mail (INBOUND_SMTP_PORT); else null (the mail says to
 * go back to the chat).
 */
async function replyAddressOf(tx: Db, accountId: number, conversationId: string): Promise<string | null> {
  if (getEnv().INBOUND_SMTP_PORT === undefined) return null;
  const local = await setInboundLocal(tx, accountId, freshLocal(), false);
  if (!local) return null;
  return addressOf(local, await ensureConversationTag(tx, accountId, conversationId, freshTag()));
}

/** The mail's Message-ID is recorded with its conversation, so an answer to it (In-Reply-To) joins that conversation. */
const threadOf = (conversationId: string, accountName: string, replyTo: string | null): NonNullable<MailInput['thread']> => ({
  messageId: `<${randomUUID()}@${getEnv().INBOUND_MAIL_DOMAIN}>`,
  conversationId,
  responseId: null,
  headers: {
    fromName: accountName
      .replace(/[\p{Cc}\p{Cf}]+/gu, ' ')
      .trim()
      .slice(0, 100),
    inReplyTo: null,
    references: [],
    replyTo,
  },
});

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
