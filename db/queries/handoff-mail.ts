import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { preciseUtcText, utcText } from './shared';

/**
 * The handoff's mail (lib/mail/handoff-notifier.ts): which waiting conversations and unseen member
 * replies are due, and claiming them (FOR UPDATE SKIP LOCKED and a mark in the same transaction as
 * the mail, so each is mailed once whichever instance gets there first).
 */

const after = (seconds: number) => sql`now() - make_interval(secs => ${seconds})`;
const waitingDue = (seconds: number) =>
  sql`c.status = 'Waiting' AND c.waiting_since <= ${after(seconds)} AND (c.waiting_mailed_at IS NULL OR c.waiting_mailed_at < c.waiting_since)`;

/**
 * Accounts with waiting mail to write, at most `limit`, the longest due first (so a burst of accounts
 * is served in the order their visitors started waiting): a conversation Waiting `seconds` whose episode
 * was not announced yet, or a member whose window has passed with announced conversations still Waiting.
 */
export async function listAccountsWithWaitingMail(db: Db, seconds: number, windowSeconds: number, limit: number): Promise<number[]> {
  const found = await rows<{ account_id: number }>(
    db,
    sql`
    SELECT d.account_id FROM (
      SELECT c.account_id, min(c.waiting_since) AS due FROM conversations c WHERE ${waitingDue(seconds)} GROUP BY c.account_id
      UNION ALL
      SELECT u.account_id, min(u.waiting_mail_at) AS due FROM admin_users u
      WHERE u.notify_email AND u.waiting_mail_at <= ${after(windowSeconds)}
        AND EXISTS (SELECT 1 FROM conversations c WHERE c.account_id = u.account_id AND c.status = 'Waiting' AND c.waiting_mailed_at > u.waiting_mail_at)
      GROUP BY u.account_id
    ) d
    GROUP BY d.account_id ORDER BY min(d.due), d.account_id LIMIT ${limit}`,
  );
  return found.map((r) => r.account_id);
}

/** The account's Waiting conversations most likely to be mailed alone (due ones first), for their summaries. */
export async function listWaitingMailCandidates(db: Db, accountId: number, seconds: number, limit: number): Promise<string[]> {
  const found = await rows<{ id: string }>(
    db,
    sql`
    SELECT c.id FROM conversations c WHERE c.account_id = ${accountId} AND c.status = 'Waiting' AND c.waiting_since <= ${after(seconds)}
    ORDER BY (c.waiting_mailed_at IS NULL OR c.waiting_mailed_at < c.waiting_since) DESC, c.waiting_since DESC LIMIT ${limit}`,
  );
  return found.map((r) => r.id);
}

/**
 * Serialises, until the transaction ends, the waiting mail of one account on every instance: what is
 * announced and when each member was mailed are stamped with clock_timestamp() under this lock, so a
 * member's next mail lists exactly what was announced after their last one.
 */
export async function lockAccountWaitingMail(tx: Db, accountId: number): Promise<void> {
  await rows(tx, sql`SELECT pg_advisory_xact_lock(hashtext(${`waiting-mail:${accountId}`}))::text`);
}

/** Marks the waiting episodes of the account's due conversations as announced (at most `limit`); returns how many. */
export async function announceDueWaitingConversations(tx: Db, accountId: number, seconds: number, limit: number): Promise<number> {
  const done = await rows<{ id: string }>(
    tx,
    sql`
    WITH due AS (
      SELECT c.id FROM conversations c WHERE c.account_id = ${accountId} AND ${waitingDue(seconds)}
      ORDER BY c.waiting_since LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE conversations c SET waiting_mailed_at = clock_timestamp() FROM due WHERE c.id = due.id RETURNING c.id`,
  );
  return done.length;
}

export type WaitingMailMember = NotifiedMember & { since: string };

/**
 * The account's members who want the waiting mail, whose last one is `windowSeconds` old (or who never
 * got one) and who have announced conversations still Waiting since then: stamps them as mailed now
 * and returns them with `since`, the time their mail covers from. Call it under lockAccountWaitingMail.
 */
export async function claimMembersForWaitingMail(tx: Db, accountId: number, windowSeconds: number): Promise<WaitingMailMember[]> {
  return rows<WaitingMailMember>(
    tx,
    sql`
    WITH due AS (
      SELECT u.id, COALESCE(u.waiting_mail_at, clock_timestamp() - make_interval(secs => ${windowSeconds})) AS since FROM admin_users u
      WHERE u.account_id = ${accountId} AND u.notify_email
        AND (u.waiting_mail_at IS NULL OR u.waiting_mail_at <= clock_timestamp() - make_interval(secs => ${windowSeconds}))
      FOR UPDATE
    )
    UPDATE admin_users u SET waiting_mail_at = clock_timestamp() FROM due
    WHERE u.id = due.id
      AND EXISTS (SELECT 1 FROM conversations c WHERE c.account_id = ${accountId} AND c.status = 'Waiting' AND c.waiting_mailed_at > due.since)
    RETURNING u.id, u.email, u.name, u.role, ${preciseUtcText(sql`due.since`)} AS since`,
  );
}

export type AnnouncedWaiting = { id: string; title: string; waiting_since: string };

/** The account's conversations announced after `since` and still Waiting, longest waiting first (at most `limit`), and how many in all. */
export async function listAnnouncedWaiting(
  tx: Db,
  accountId: number,
  since: string,
  limit: number,
): Promise<{ total: number; conversations: AnnouncedWaiting[] }> {
  const where = sql`c.account_id = ${accountId} AND c.status = 'Waiting' AND c.waiting_mailed_at > (${since}::timestamp AT TIME ZONE 'UTC')`;
  const [count] = await rows<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM conversations c WHERE ${where}`);
  const conversations = await rows<AnnouncedWaiting>(
    tx,
    sql`SELECT c.id, c.title, ${utcText(sql`c.waiting_since`)} AS waiting_since FROM conversations c WHERE ${where} ORDER BY c.waiting_since, c.id LIMIT ${limit}`,
  );
  return { total: count?.n ?? 0, conversations };
}

export async function getAccountName(db: Db, accountId: number): Promise<string> {
  const [a] = await rows<{ name: string }>(db, sql`SELECT name FROM accounts WHERE id = ${accountId}`);
  return a?.name ?? '';
}

export type NotifiedMember = { id: number; email: string; name: string; role: 'owner' | 'admin' | 'agent' };

/** The account's members who want an email when a conversation waits (/profile). */
export async function listMembersNotifiedByEmail(db: Db, accountId: number): Promise<NotifiedMember[]> {
  return rows(db, sql`SELECT id, email, name, role FROM admin_users WHERE account_id = ${accountId} AND notify_email ORDER BY id`);
}

export async function setMemberNotifyEmail(db: Db, accountId: number, userId: number, on: boolean): Promise<boolean> {
  const done = await rows<{ id: number }>(db, sql`UPDATE admin_users SET notify_email = ${on} WHERE id = ${userId} AND account_id = ${accountId} RETURNING id`);
  return done.length > 0;
}

/** Conversations with a visitor address and a member reply unseen and unmailed for `seconds`, the oldest reply first. */
export async function listConversationsWithUnseenReplies(db: Db, seconds: number, limit: number): Promise<Array<{ id: string; account_id: number }>> {
  return rows(
    db,
    sql`
    SELECT m.conversation_id AS id, m.account_id FROM conversation_messages m
    JOIN conversations c ON c.id = m.conversation_id AND c.visitor_email IS NOT NULL
    WHERE m.author = 'agent' AND m.seen_at IS NULL AND m.mailed_at IS NULL AND m.created_at <= ${after(seconds)}
    GROUP BY m.conversation_id, m.account_id ORDER BY min(m.created_at), m.conversation_id
    LIMIT ${limit}`,
  );
}

export type ClaimedReplies = {
  visitor_email: string;
  account_name: string;
  title: string;
  replies: Array<{ author_name: string | null; text: string; created_at: string }>;
};

/**
 * Once one of a conversation's unseen member replies is due, marks all its unseen replies as mailed
 * (one mail says everything the visitor missed) and returns them, oldest first, with the visitor's
 * address; null when none is left to mail (seen, or mailed by another instance).
 */
export async function claimUnseenReplies(tx: Db, accountId: number, conversationId: string, seconds: number): Promise<ClaimedReplies | null> {
  const [c] = await rows<{ visitor_email: string | null; title: string; account_name: string }>(
    tx,
    sql`
    SELECT c.visitor_email, c.title, a.name AS account_name FROM conversations c JOIN accounts a ON a.id = c.account_id
    WHERE c.id = ${conversationId} AND c.account_id = ${accountId}`,
  );
  if (!c?.visitor_email) return null;
  const replies = await rows<{ author_name: string | null; text: string; created_at: string; seq: number }>(
    tx,
    sql`
    WITH due AS (
      SELECT m.id FROM conversation_messages m
      WHERE m.account_id = ${accountId} AND m.conversation_id = ${conversationId} AND m.author = 'agent'
        AND m.seen_at IS NULL AND m.mailed_at IS NULL
        AND EXISTS (SELECT 1 FROM conversation_messages d WHERE d.conversation_id = m.conversation_id AND d.author = 'agent'
          AND d.seen_at IS NULL AND d.mailed_at IS NULL AND d.created_at <= ${after(seconds)})
      FOR UPDATE OF m SKIP LOCKED
    )
    UPDATE conversation_messages m SET mailed_at = now() FROM due WHERE m.id = due.id
    RETURNING m.author_name, m.text, ${utcText(sql`m.created_at`)} AS created_at, m.seq::float8 AS seq`,
  );
  if (replies.length === 0) return null;
  replies.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.seq - b.seq);
  return {
    visitor_email: c.visitor_email,
    account_name: c.account_name,
    title: c.title,
    replies: replies.map(({ seq: _s, ...r }) => r),
  };
}

/** A member reply that went out by mail itself (an email conversation): the unseen-replies mail never repeats it. */
export async function markReplyMailed(tx: Db, accountId: number, messageId: string): Promise<void> {
  await rows(tx, sql`UPDATE conversation_messages SET mailed_at = now() WHERE id = ${messageId} AND account_id = ${accountId} RETURNING id`);
}
