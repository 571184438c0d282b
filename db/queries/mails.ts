import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { accountIsLive } from './account-deletion';
import { mails } from '../schema';

/** The headers of a mail in a conversation's thread (docs/contracts.md §17). */
/** `automatic`: written by svc itself (the AI's answer, an acknowledgement), marked `Auto-Submitted: auto-replied` (RFC 3834). */
export type ThreadHeaders = { fromName: string; inReplyTo: string | null; references: string[]; replyTo: string | null; automatic?: boolean };
export type MailInput = {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** A mail in a conversation's thread: its Message-ID, the conversation, the answer it carries (mailed once), its headers. */
  thread?: { messageId: string; conversationId: string; responseId: string | null; headers: ThreadHeaders; conversationMessageId?: string | null };
};
export type ClaimedMail = {
  id: number;
  account_id: number;
  to: string;
  subject: string;
  text: string;
  html: string;
  attempts: number;
  message_id: string | null;
  thread_headers: ThreadHeaders | null;
  conversation_id: string | null;
  conversation_message_id: string | null;
};

/** Mail of no account (sign-up): one more turn in the outbox's rotation. */
export const NO_ACCOUNT = 0;

/** Writes a mail for `accountId` (NO_ACCOUNT for none) to the outbox; call it with the transaction of the change that causes the mail. */
export async function insertMail(db: Db, accountId: number, m: MailInput): Promise<void> {
  const { thread, ...mail } = m;
  await db.insert(mails).values({
    ...mail,
    accountId,
    ...(thread
      ? {
          messageId: thread.messageId,
          conversationId: thread.conversationId,
          responseId: thread.responseId,
          threadHeaders: thread.headers,
          conversationMessageId: thread.conversationMessageId ?? null,
        }
      : {}),
  });
}

/** Writes a thread mail carrying an answer unless that answer was mailed already (two instances racing); true when written. */
export async function insertAnswerMail(db: Db, accountId: number, m: MailInput & { thread: NonNullable<MailInput['thread']> }): Promise<boolean> {
  const done = await db
    .insert(mails)
    .values({
      to: m.to,
      subject: m.subject,
      text: m.text,
      html: m.html,
      accountId,
      messageId: m.thread.messageId,
      conversationId: m.thread.conversationId,
      responseId: m.thread.responseId,
      threadHeaders: m.thread.headers,
    })
    .onConflictDoNothing()
    .returning({ id: mails.id });
  return done.length > 0;
}

/**
 * Leases up to `limit` due mails for `leaseSeconds` (FOR UPDATE SKIP LOCKED: each goes to one
 * instance); a lease that lapses (its sender died) makes the mail due again. Fair as the webhooks
 * claim: it walks the accounts that have pending mail (one probe each of `mails_claim_idx`, NO_ACCOUNT
 * among them), reads each one's oldest due mails, and takes every account's oldest before any
 * account's second, so one account's backlog never delays another account's mail.
 */
export async function claimDueMails(db: Db, limit: number, leaseSeconds: number): Promise<ClaimedMail[]> {
  return rows<ClaimedMail>(
    db,
    sql`
    WITH RECURSIVE accts AS (
      (SELECT account_id FROM mails WHERE status = 'pending' ORDER BY account_id LIMIT 1)
      UNION ALL
      SELECT (SELECT m.account_id FROM mails m WHERE m.status = 'pending' AND m.account_id > accts.account_id ORDER BY m.account_id LIMIT 1)
      FROM accts WHERE accts.account_id IS NOT NULL
    ), heads AS (
      SELECT h.id, h.next_attempt_at, row_number() OVER (PARTITION BY accts.account_id ORDER BY h.next_attempt_at, h.id) AS rn
      FROM accts CROSS JOIN LATERAL (
        SELECT m.id, m.next_attempt_at FROM mails m
        WHERE m.account_id = accts.account_id AND m.status = 'pending' AND m.next_attempt_at <= now() AND ${accountIsLive(sql`accts.account_id`)}
          AND (m.lease_until IS NULL OR m.lease_until < now())
        ORDER BY m.next_attempt_at, m.id LIMIT ${limit}
      ) h
    ), due AS (
      SELECT id FROM mails
      WHERE id IN (SELECT id FROM heads ORDER BY rn, next_attempt_at, id LIMIT ${limit})
        AND status = 'pending' AND (lease_until IS NULL OR lease_until < now())
      FOR UPDATE SKIP LOCKED
    )
    UPDATE mails m SET lease_until = now() + make_interval(secs => ${leaseSeconds}), attempts = m.attempts + 1
    FROM due WHERE m.id = due.id
    RETURNING m.id, m.account_id, m."to", m.subject, m.text, m.html, m.attempts, m.message_id, m.thread_headers, m.conversation_id, m.conversation_message_id`,
  );
}

export async function markMailDone(db: Db, id: number, status: 'sent' | 'logged'): Promise<void> {
  await db
    .update(mails)
    .set({ status, leaseUntil: null, lastError: null, sentAt: status === 'sent' ? sql`now()` : null })
    .where(eq(mails.id, id));
}

/** Claimed mails this instance will not try (it is stopping): pending again at once, the claim's attempt undone. */
export async function releaseMails(db: Db, ids: number[]): Promise<void> {
  if (!ids.length) return;
  await db
    .update(mails)
    .set({ leaseUntil: null, attempts: sql`${mails.attempts} - 1` })
    .where(and(inArray(mails.id, ids), eq(mails.status, 'pending')));
}

/** A failed attempt: the mail stays pending, due again after `retryInMs`. */
export async function markMailFailed(db: Db, id: number, error: string, retryInMs: number): Promise<void> {
  await db
    .update(mails)
    .set({
      leaseUntil: null,
      lastError: error.slice(0, 1000),
      nextAttemptAt: sql`now() + make_interval(secs => ${retryInMs / 1000})`,
    })
    .where(and(eq(mails.id, id), eq(mails.status, 'pending')));
}

/** A mail that will never go (the receiving server refused it for good): `failed`, with why. */
export async function markMailRefused(db: Db, id: number, error: string): Promise<void> {
  await db
    .update(mails)
    .set({ status: 'failed', leaseUntil: null, lastError: error.slice(0, 1000) })
    .where(and(eq(mails.id, id), eq(mails.status, 'pending')));
}

/** A member reply's mail as the inbox shows it: queued (pending), sent (or kept in the log), failed. */
export type ReplyMailState = { message_id: string; state: 'queued' | 'sent' | 'failed'; error: string | null };
const stateOf = sql<ReplyMailState['state']>`CASE WHEN status = 'failed' THEN 'failed' WHEN status IN ('sent', 'logged') THEN 'sent' ELSE 'queued' END`;

/** The mail states of the member replies of one conversation of the account (the inbox's labels), at most `limit`, newest first. */
export async function listReplyMailStates(db: Db, accountId: number, conversationId: string, limit = 1000): Promise<ReplyMailState[]> {
  return rows<ReplyMailState>(
    db,
    sql`SELECT conversation_message_id AS message_id, ${stateOf} AS state, CASE WHEN status = 'failed' THEN last_error END AS error FROM mails
    WHERE account_id = ${accountId} AND conversation_id = ${conversationId} AND conversation_message_id IS NOT NULL
    ORDER BY id DESC LIMIT ${limit}`,
  );
}

export type ReportedMail = { account_id: number; conversation_id: string | null; conversation_message_id: string | null };

/**
 * A delivery report (multipart/report) says these mails of the account failed: they become `failed`
 * with its reason (a pending one is not sent any more); mails of other accounts are never touched.
 */
export async function failReportedMails(db: Db, accountId: number, messageIds: string[], error: string): Promise<ReportedMail[]> {
  if (messageIds.length === 0) return [];
  return rows<ReportedMail>(
    db,
    sql`UPDATE mails SET status = 'failed', lease_until = NULL, last_error = ${error.slice(0, 1000)}
    WHERE account_id = ${accountId} AND message_id = ANY(${sql.param(messageIds)}::text[]) AND status <> 'failed'
    RETURNING account_id, conversation_id, conversation_message_id`,
  );
}

/** The newest mail svc sent in one conversation of the account: `failed` (a report that names no Message-ID came to the conversation's tagged address). */
export async function failNewestConversationMail(db: Db, accountId: number, conversationId: string, error: string): Promise<ReportedMail[]> {
  return rows<ReportedMail>(
    db,
    sql`UPDATE mails SET status = 'failed', last_error = ${error.slice(0, 1000)}
    WHERE id = (SELECT id FROM mails WHERE account_id = ${accountId} AND conversation_id = ${conversationId} AND status IN ('sent', 'logged') ORDER BY id DESC LIMIT 1)
    RETURNING account_id, conversation_id, conversation_message_id`,
  );
}

/** The outbox, newest first (CLI `mail list`). */
export async function listMails(db: Db, o: { to?: string; limit: number }) {
  return db
    .select({
      id: mails.id,
      to: mails.to,
      subject: mails.subject,
      text: mails.text,
      status: mails.status,
      attempts: mails.attempts,
      lastError: mails.lastError,
      createdAt: mails.createdAt,
      sentAt: mails.sentAt,
    })
    .from(mails)
    .where(o.to ? eq(mails.to, o.to) : undefined)
    .orderBy(desc(mails.createdAt), desc(mails.id))
    .limit(o.limit);
}

/** Mails written to an address in the last `seconds` (the per-address bound of emailed links). */
export async function countRecentMailsTo(db: Db, to: string, seconds: number): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(mails)
    .where(and(eq(mails.to, to), sql`${mails.createdAt} >= now() - make_interval(secs => ${seconds})`));
  return row?.n ?? 0;
}

/** Serialises, until the transaction ends, the writers of mail to one address (so its bound is exact). */
export async function lockMailAddress(db: Db, to: string): Promise<void> {
  await rows(db, sql`SELECT pg_advisory_xact_lock(hashtext(${`mail:${to}`}))::text`);
}
