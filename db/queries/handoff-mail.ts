import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { utcText } from './shared';

/**
 * The handoff's mail (lib/mail/handoff-notifier.ts): which waiting conversations and unseen member
 * replies are due, and claiming them (FOR UPDATE SKIP LOCKED and a mark in the same transaction as
 * the mail, so each is mailed once whichever instance gets there first).
 */

const after = (seconds: number) => sql`now() - make_interval(secs => ${seconds})`;
const waitingDue = (seconds: number) =>
  sql`c.status = 'Waiting' AND c.waiting_since <= ${after(seconds)} AND (c.waiting_mailed_at IS NULL OR c.waiting_mailed_at < c.waiting_since)`;

/** Conversations Waiting at least `seconds` whose waiting episode was not mailed yet, longest waiting first. */
export async function listDueWaitingConversations(db: Db, seconds: number, limit: number): Promise<Array<{ id: string; account_id: number }>> {
  return rows(db, sql`SELECT c.id, c.account_id FROM conversations c WHERE ${waitingDue(seconds)} ORDER BY c.waiting_since, c.id LIMIT ${limit}`);
}

export type ClaimedWaiting = { id: string; title: string; account_name: string; waiting_since: string };

/**
 * Marks the conversation's waiting episode as mailed when it is still due; null when it is not
 * (claimed by another instance, mailed, taken over meanwhile). Call it in the mail's transaction.
 */
export async function claimWaitingConversation(tx: Db, accountId: number, conversationId: string, seconds: number): Promise<ClaimedWaiting | null> {
  const [row] = await rows<ClaimedWaiting>(
    tx,
    sql`
    WITH due AS (
      SELECT c.id FROM conversations c WHERE c.id = ${conversationId} AND c.account_id = ${accountId} AND ${waitingDue(seconds)}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE conversations c SET waiting_mailed_at = now() FROM due, accounts a
    WHERE c.id = due.id AND a.id = c.account_id
    RETURNING c.id, c.title, a.name AS account_name, ${utcText(sql`c.waiting_since`)} AS waiting_since`,
  );
  return row ?? null;
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

/** Conversations with a visitor address and a member reply unseen and unmailed for `seconds`. */
export async function listConversationsWithUnseenReplies(db: Db, seconds: number, limit: number): Promise<Array<{ id: string; account_id: number }>> {
  return rows(
    db,
    sql`
    SELECT DISTINCT m.conversation_id AS id, m.account_id FROM conversation_messages m
    JOIN conversations c ON c.id = m.conversation_id AND c.visitor_email IS NOT NULL
    WHERE m.author = 'agent' AND m.seen_at IS NULL AND m.mailed_at IS NULL AND m.created_at <= ${after(seconds)}
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
