import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { accountIsLive } from './account-deletion';

/**
 * Inbound mail (docs/contracts.md §17, lib/email): the account behind an inbound address, the raw
 * message stored before the listener's `250`, and its processing from the store (a lease, so one
 * instance processes each; the same Message-ID from the same sender to one account is done once).
 */

/** The account whose inbound address has this local part (the recipient check at `RCPT`); null when none. */
export async function getAccountByInboundLocal(db: Db, local: string): Promise<number | null> {
  const [row] = await rows<{ id: number }>(db, sql`SELECT id FROM accounts WHERE inbound_local = ${local}`);
  return row?.id ?? null;
}

/** The account's inbound local part; `fresh` becomes it when it has none yet (or always, with `replace`). */
export async function setInboundLocal(db: Db, accountId: number, fresh: string, replace: boolean): Promise<string | null> {
  const [row] = await rows<{ inbound_local: string }>(
    db,
    replace
      ? sql`UPDATE accounts SET inbound_local = ${fresh} WHERE id = ${accountId} RETURNING inbound_local`
      : sql`UPDATE accounts SET inbound_local = COALESCE(inbound_local, ${fresh}) WHERE id = ${accountId} RETURNING inbound_local`,
  );
  return row?.inbound_local ?? null;
}

/** Stores a received message; the listener answers `250` only after this returned. */
export async function insertInboundMail(db: Db, accountId: number, m: { envelopeFrom: string; recipient: string; raw: Buffer }): Promise<number> {
  const [row] = await rows<{ id: number }>(
    db,
    sql`
    INSERT INTO inbound_mails (account_id, envelope_from, recipient, raw, size)
    VALUES (${accountId}, ${m.envelopeFrom}, ${m.recipient}, ${m.raw}, ${m.raw.length})
    RETURNING id::float8 AS id`,
  );
  return row!.id;
}

export type ClaimedInboundMail = { id: number; account_id: number; envelope_from: string; recipient: string; raw: Buffer; attempts: number };

/**
 * Leases up to `limit` stored messages for `leaseSeconds`, oldest first (FOR UPDATE SKIP LOCKED: each
 * goes to one instance); a lease that lapses (its instance died) makes the message due again.
 */
export async function claimInboundMails(db: Db, limit: number, leaseSeconds: number): Promise<ClaimedInboundMail[]> {
  const found = await rows<Omit<ClaimedInboundMail, 'raw'> & { raw: Uint8Array | Buffer }>(
    db,
    sql`
    WITH due AS (
      SELECT id FROM inbound_mails
      WHERE status = 'stored' AND (lease_until IS NULL OR lease_until < now()) AND ${accountIsLive(sql`account_id`)}
      ORDER BY received_at, id LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE inbound_mails m SET lease_until = now() + make_interval(secs => ${leaseSeconds}), attempts = m.attempts + 1
    FROM due WHERE m.id = due.id
    RETURNING m.id::float8 AS id, m.account_id, m.envelope_from, m.recipient, m.raw, m.attempts`,
  );
  return found.map((r) => ({ ...r, raw: Buffer.from(r.raw) }));
}

/**
 * Marks a leased message processed with what its headers say, in the caller's transaction: `done`,
 * or `duplicate` when the account already has the same Message-ID from the same sender done (a
 * transaction-scoped lock on that triple serialises two instances racing on copies).
 */
export async function finishInboundMail(
  tx: Db,
  accountId: number,
  id: number,
  h: {
    messageId: string | null;
    fromAddress: string | null;
    subject: string | null;
    conversationId: string | null;
    clientMessageId: string | null;
    threadIds: string[];
  },
): Promise<'done' | 'duplicate'> {
  if (h.messageId && h.fromAddress) {
    await rows(tx, sql`SELECT pg_advisory_xact_lock(hashtext(${`inbound:${accountId}:${h.fromAddress}:${h.messageId}`}))::text`);
    const [seen] = await rows<{ id: number }>(
      tx,
      sql`SELECT id::float8 AS id FROM inbound_mails WHERE account_id = ${accountId} AND from_address = ${h.fromAddress} AND message_id = ${h.messageId} AND status = 'done' LIMIT 1`,
    );
    if (seen) {
      await rows(
        tx,
        sql`UPDATE inbound_mails SET status = 'duplicate', lease_until = NULL, processed_at = now(), message_id = ${h.messageId}, from_address = ${h.fromAddress}, subject = ${h.subject},
          conversation_id = ${h.conversationId}
        WHERE id = ${id} AND account_id = ${accountId} RETURNING id`,
      );
      return 'duplicate';
    }
  }
  await rows(
    tx,
    sql`UPDATE inbound_mails SET status = 'done', lease_until = NULL, processed_at = now(), last_error = NULL, message_id = ${h.messageId}, from_address = ${h.fromAddress}, subject = ${h.subject},
      conversation_id = ${h.conversationId}, client_message_id = ${h.clientMessageId}, thread_ids = ${JSON.stringify(h.threadIds)}::jsonb
    WHERE id = ${id} AND account_id = ${accountId} RETURNING id`,
  );
  return 'done';
}

/** A processing attempt failed: due again after its lease (`final`: given up, kept for the team to read). */
export async function failInboundMail(db: Db, accountId: number, id: number, error: string, final: boolean): Promise<void> {
  await rows(
    db,
    sql`UPDATE inbound_mails SET last_error = ${error.slice(0, 1000)}, status = ${final ? 'failed' : 'stored'}
    WHERE id = ${id} AND account_id = ${accountId} RETURNING id`,
  );
}

export type InboundMailRow = {
  id: number;
  envelope_from: string;
  from_address: string | null;
  message_id: string | null;
  subject: string | null;
  status: string;
  size: number;
  received_at: string;
};

/** The account's received mail, newest first (CLI `email list`). */
export async function listInboundMails(db: Db, accountId: number, limit: number): Promise<InboundMailRow[]> {
  return rows<InboundMailRow>(
    db,
    sql`
    SELECT id::float8 AS id, envelope_from, from_address, message_id, subject, status, size,
      to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS received_at
    FROM inbound_mails WHERE account_id = ${accountId} ORDER BY received_at DESC, id DESC LIMIT ${limit}`,
  );
}

export type ThreadConversation = { id: string; visitor_id: string | null; channel_id: number };

/** The conversation of the newest mail svc received with one of these Message-IDs (a reply's In-Reply-To and References); null when none. */
export async function findThreadConversation(db: Db, accountId: number, messageIds: string[]): Promise<ThreadConversation | null> {
  if (messageIds.length === 0) return null;
  const [row] = await rows<ThreadConversation>(
    db,
    sql`
    SELECT c.id, c.visitor_id, c.channel_id FROM inbound_mails m
    JOIN conversations c ON c.id = m.conversation_id AND c.account_id = m.account_id
    WHERE m.account_id = ${accountId} AND m.message_id = ANY(${sql.param(messageIds)}::text[]) AND m.conversation_id IS NOT NULL
    ORDER BY m.id DESC LIMIT 1`,
  );
  return row ?? null;
}

export type EmailSettingsRow = { ai_answers: boolean; acknowledge: boolean; inbound_local: string | null };

/** The account's email settings (/email); null when no such account. */
export async function getEmailSettingsRow(db: Db, accountId: number): Promise<EmailSettingsRow | null> {
  const [row] = await rows<EmailSettingsRow>(
    db,
    sql`SELECT email_ai_answers AS ai_answers, email_acknowledge AS acknowledge, inbound_local FROM accounts WHERE id = ${accountId}`,
  );
  return row ?? null;
}

export async function setEmailSettingsRow(db: Db, accountId: number, s: { aiAnswers: boolean; acknowledge: boolean }): Promise<boolean> {
  const done = await rows<{ id: number }>(
    db,
    sql`UPDATE accounts SET email_ai_answers = ${s.aiAnswers}, email_acknowledge = ${s.acknowledge} WHERE id = ${accountId} RETURNING id`,
  );
  return done.length > 0;
}

/** The conversation of the account whose Reply-To tag this is; null when none (the tag svc issued in its mails). */
export async function findTaggedConversation(db: Db, accountId: number, tag: string): Promise<ThreadConversation | null> {
  const [row] = await rows<ThreadConversation>(
    db,
    sql`SELECT id, visitor_id, channel_id FROM conversations WHERE account_id = ${accountId} AND email_tag = ${tag}`,
  );
  return row ?? null;
}

/** The conversation's Reply-To tag, `fresh` when it has none yet. */
export async function ensureConversationTag(db: Db, accountId: number, conversationId: string, fresh: string): Promise<string> {
  const [row] = await rows<{ email_tag: string }>(
    db,
    sql`UPDATE conversations SET email_tag = COALESCE(email_tag, ${fresh}) WHERE id = ${conversationId} AND account_id = ${accountId} RETURNING email_tag`,
  );
  return row!.email_tag;
}

/** The conversation of a mail svc sent (its Message-ID), for threading; null when none. */
export async function findSentThreadConversation(db: Db, accountId: number, messageIds: string[]): Promise<ThreadConversation | null> {
  if (messageIds.length === 0) return null;
  const [row] = await rows<ThreadConversation>(
    db,
    sql`
    SELECT c.id, c.visitor_id, c.channel_id FROM mails m JOIN conversations c ON c.id = m.conversation_id AND c.account_id = m.account_id
    WHERE m.account_id = ${accountId} AND m.message_id = ANY(${sql.param(messageIds)}::text[]) ORDER BY m.id DESC LIMIT 1`,
  );
  return row ?? null;
}

export type PendingEmailAnswer = {
  response_id: string;
  account_id: number;
  conversation_id: string;
  answer: string;
  declined: boolean;
  sources: unknown;
  handled_by: 'ai' | 'human';
  /** The conversation's status now (a person may have resolved it since the answer). */
  status: string;
  visitor_email: string | null;
  account_name: string;
  inbound_local: string | null;
  mail_message_id: string | null;
  mail_subject: string | null;
  mail_thread_ids: string[] | null;
  mail_from: string | null;
};

/**
 * Answers to mail processed in the last hour not handled yet (email_answers), oldest first, with the
 * mail they answer (by its question's client message id); `limit` at most. Driven by the recent mail
 * (inbound_mails_processed_idx), so a pass reads only the last hour's mail, never all responses.
 */
export async function listPendingEmailAnswers(db: Db, limit: number): Promise<PendingEmailAnswer[]> {
  return rows<PendingEmailAnswer>(
    db,
    sql`
    SELECT r.id AS response_id, r.account_id, r.conversation_id, r.answer, r.declined, r.sources, c.handled_by, c.status, c.visitor_email,
      a.name AS account_name, a.inbound_local,
      im.message_id AS mail_message_id, im.subject AS mail_subject, im.thread_ids AS mail_thread_ids, im.from_address AS mail_from
    FROM inbound_mails im
    JOIN responses r ON r.conversation_id = im.conversation_id AND r.client_message_id = im.client_message_id AND r.account_id = im.account_id
    JOIN conversations c ON c.id = r.conversation_id AND c.account_id = r.account_id
    JOIN accounts a ON a.id = r.account_id
    WHERE im.status = 'done' AND im.processed_at > now() - interval '1 hour' AND im.client_message_id IS NOT NULL AND r.error IS NULL
      AND NOT EXISTS (SELECT 1 FROM email_answers e WHERE e.response_id = r.id)
    ORDER BY im.processed_at LIMIT ${limit}`,
  );
}

/** Records how an answer was handled; false when another instance did it first. */
export async function markEmailAnswer(db: Db, accountId: number, responseId: string, outcome: 'mailed' | 'handed_off' | 'not_mailed'): Promise<boolean> {
  const done = await rows<{ response_id: string }>(
    db,
    sql`INSERT INTO email_answers (response_id, account_id, outcome) VALUES (${responseId}, ${accountId}, ${outcome}) ON CONFLICT DO NOTHING RETURNING response_id`,
  );
  return done.length > 0;
}

/** Mails the account's AI wrote to one address in the last hour — answers and acknowledgements, both keyed by response_id (EMAIL_ANSWERS_PER_SENDER_PER_HOUR). */
export async function countAnswerMailsTo(db: Db, accountId: number, to: string): Promise<number> {
  const [row] = await rows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM mails WHERE "to" = ${to} AND account_id = ${accountId} AND response_id IS NOT NULL AND created_at > now() - interval '1 hour'`,
  );
  return row?.n ?? 0;
}

export type AcknowledgeFacts = {
  acknowledge: boolean;
  /** The conversation's wait (waiting_since, UTC to the microsecond) while it is Waiting; null otherwise. */
  waiting_since: string | null;
  visitor_email: string | null;
  account_name: string;
  inbound_local: string | null;
};

/** What an acknowledgement of a mail needs: the account's "Acknowledge new emails" and the conversation's wait; null when no such conversation. */
export async function getAcknowledgeFacts(db: Db, accountId: number, conversationId: string): Promise<AcknowledgeFacts | null> {
  const [row] = await rows<AcknowledgeFacts>(
    db,
    sql`
    SELECT a.email_acknowledge AS acknowledge, c.visitor_email, a.name AS account_name, a.inbound_local,
      CASE WHEN c.status = 'Waiting' THEN to_char(c.waiting_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') END AS waiting_since
    FROM conversations c JOIN accounts a ON a.id = c.account_id
    WHERE c.id = ${conversationId} AND c.account_id = ${accountId}`,
  );
  return row ?? null;
}

export type ConversationMailRow = { id: number; from_address: string | null; subject: string | null; received_at: string; size: number };

/** The mail svc received into a conversation, oldest first (at most `limit`): what "Show original" lists. */
export async function listConversationMails(db: Db, accountId: number, conversationId: string, limit: number): Promise<ConversationMailRow[]> {
  return rows<ConversationMailRow>(
    db,
    sql`
    SELECT id::float8 AS id, COALESCE(from_address, envelope_from) AS from_address, subject, size,
      to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS received_at
    FROM inbound_mails WHERE account_id = ${accountId} AND conversation_id = ${conversationId} AND status IN ('done', 'duplicate')
    ORDER BY received_at, id LIMIT ${limit}`,
  );
}

/** A received mail's raw text, of that conversation of the account only; null otherwise. */
export async function getInboundMailRaw(db: Db, accountId: number, conversationId: string, id: number): Promise<Buffer | null> {
  const [row] = await rows<{ raw: Uint8Array }>(
    db,
    sql`SELECT raw FROM inbound_mails WHERE id = ${id} AND account_id = ${accountId} AND conversation_id = ${conversationId}`,
  );
  return row ? Buffer.from(row.raw) : null;
}

export type ReplyMailFacts = {
  visitor_id: string | null;
  visitor_email: string | null;
  title: string;
  account_name: string;
  inbound_local: string | null;
  /** The last mail svc received in the conversation: the one a member's reply answers. */
  mail_message_id: string | null;
  mail_subject: string | null;
  mail_thread_ids: string[] | null;
};

/** What a member's reply mail in an email conversation needs (its address, subject and thread); null when no such conversation. */
export async function getReplyMailFacts(db: Db, accountId: number, conversationId: string): Promise<ReplyMailFacts | null> {
  const [row] = await rows<ReplyMailFacts>(
    db,
    sql`
    SELECT c.visitor_id, c.visitor_email, c.title, a.name AS account_name, a.inbound_local,
      im.message_id AS mail_message_id, im.subject AS mail_subject, im.thread_ids AS mail_thread_ids
    FROM conversations c JOIN accounts a ON a.id = c.account_id
    LEFT JOIN LATERAL (
      SELECT message_id, subject, thread_ids FROM inbound_mails
      WHERE account_id = c.account_id AND conversation_id = c.id AND status = 'done' ORDER BY id DESC LIMIT 1
    ) im ON true
    WHERE c.id = ${conversationId} AND c.account_id = ${accountId}`,
  );
  return row ?? null;
}

/** Marks a leased message as svc's own test mail (/email "Send a test email"): processed, no conversation. */
export async function finishTestMail(
  db: Db,
  accountId: number,
  id: number,
  h: { messageId: string; fromAddress: string | null; subject: string | null },
): Promise<void> {
  await rows(
    db,
    sql`UPDATE inbound_mails SET status = 'test', lease_until = NULL, processed_at = now(), last_error = NULL, message_id = ${h.messageId}, from_address = ${h.fromAddress}, subject = ${h.subject}
    WHERE id = ${id} AND account_id = ${accountId} RETURNING id`,
  );
}

/** When the account's test mail with this Message-ID was received (UTC `HH24:MI:SS`), once processed; null before. */
export async function findTestMailReceived(db: Db, accountId: number, messageId: string): Promise<string | null> {
  const [row] = await rows<{ at: string }>(
    db,
    sql`SELECT to_char(received_at AT TIME ZONE 'UTC', 'HH24:MI:SS') AS at FROM inbound_mails
    WHERE account_id = ${accountId} AND message_id = ${messageId} AND status = 'test' LIMIT 1`,
  );
  return row?.at ?? null;
}

/** The account's newest test mail received (UTC `HH24:MI:SS`, and its date), or null. */
export async function newestTestMail(db: Db, accountId: number): Promise<{ at: string; day: string } | null> {
  const [row] = await rows<{ at: string; day: string }>(
    db,
    sql`SELECT to_char(received_at AT TIME ZONE 'UTC', 'HH24:MI:SS') AS at, to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM inbound_mails
    WHERE account_id = ${accountId} AND status = 'test' ORDER BY received_at DESC, id DESC LIMIT 1`,
  );
  return row ?? null;
}
