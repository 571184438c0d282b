import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  customType,
  date,
  doublePrecision,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  real,
  serial,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => 'bytea' });
const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });
const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });
/** The tenant column: the account a row belongs to (every tenant query filters on it). */
const accountRef = () =>
  integer('account_id')
    .notNull()
    .references(() => accounts.id);
/** The conversation a row belongs to. */
const conversationRef = () =>
  uuid('conversation_id')
    .notNull()
    .references(() => conversations.id);

/** One customer. The two counters are kept exact by every writer (see db/queries/counters.ts). */
export const accounts = pgTable(
  'accounts',
  {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    conversationCount: integer('conversation_count').notNull().default(0),
    responseCount: integer('response_count').notNull().default(0),
    createdAt: ts('created_at').notNull().defaultNow(),
    /** The local part of the account's inbound mail address (docs/contracts.md §17), unguessable; null until first shown. */
    inboundLocal: text('inbound_local').unique(),
    /** /email (docs/contracts.md §17): "AI answers email" (on) and "Acknowledge new emails" (off). */
    emailAiAnswers: boolean('email_ai_answers').notNull().default(true),
    emailAcknowledge: boolean('email_acknowledge').notNull().default(false),
    /** Set when the owner deleted the account (docs/contracts.md §18): every door refuses it while its rows go in batches. */
    deletedAt: ts('deleted_at'),
    /** The instance carrying on the deletion holds it until then; a lapsed lease is taken over by any instance's sweep. */
    deletionLeaseUntil: ts('deletion_lease_until'),
    /** /privacy (docs/contracts.md §18): conversations whose last message is older than this many days are deleted (null: off). */
    retentionDays: integer('retention_days'),
  },
  (t) => [index('accounts_deleted_idx').on(t.id).where(sql`deleted_at IS NOT NULL`)],
);

/**
 * The members of an account (docs/contracts.md §13). `role` is owner, admin or agent; one owner per
 * account. `totp_secret` is encrypted (lib/auth/two-factor.ts); `totp_last_step` is the last
 * accepted time step, so a code is accepted once.
 */
export const adminUsers = pgTable(
  'admin_users',
  {
    id: serial('id').primaryKey(),
    accountId: accountRef(),
    email: text('email').notNull(),
    passwordHash: text('password_hash').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    name: text('name').notNull().default(''),
    role: text('role').notNull().default('admin'),
    lastSeenAt: ts('last_seen_at'),
    totpSecret: text('totp_secret'),
    totpEnabledAt: ts('totp_enabled_at'),
    totpLastStep: bigint('totp_last_step', { mode: 'number' }),
    /** Handoff: `online` or `away` as the member set it; online counts only with a dashboard seen in the last 10 minutes. */
    availability: text('availability').notNull().default('online'),
    dashboardSeenAt: ts('dashboard_seen_at'),
    notifyEmail: boolean('notify_email').notNull().default(true),
    /** When this member was last mailed about waiting conversations (one mail a window, lib/mail/handoff-notifier.ts). */
    waitingMailAt: ts('waiting_mail_at'),
  },
  (t) => [
    uniqueIndex('admin_users_email_idx').on(t.email),
    uniqueIndex('admin_users_one_owner_idx').on(t.accountId).where(sql`role = 'owner'`),
    index('admin_users_account_idx').on(t.accountId, t.id),
  ],
);

/** Per-account team settings (absent row = defaults). */
export const teamSettings = pgTable('team_settings', {
  accountId: integer('account_id')
    .primaryKey()
    .references(() => accounts.id),
  requireTwoFactor: boolean('require_two_factor').notNull().default(false),
});

/** Single-use recovery codes of a member's two-factor sign-in, stored hashed. */
export const recoveryCodes = pgTable(
  'recovery_codes',
  {
    userId: integer('user_id')
      .notNull()
      .references(() => adminUsers.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
  },
  (t) => [primaryKey({ name: 'recovery_codes_pk', columns: [t.userId, t.codeHash] })],
);

/** Invitations to join an account: the link's token is stored only as its SHA-256. */
export const invitations = pgTable(
  'invitations',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    accountId: accountRef(),
    email: text('email').notNull(),
    role: text('role').notNull(),
    tokenHash: text('token_hash').notNull(),
    invitedBy: integer('invited_by').references(() => adminUsers.id, { onDelete: 'set null' }),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    acceptedAt: ts('accepted_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [uniqueIndex('invitations_token_idx').on(t.tokenHash), index('invitations_account_idx').on(t.accountId, t.createdAt)],
);

/**
 * Single-use emailed links other than invitations: `reset` (a password reset of `user_id`) and
 * `signup` (a new account waiting for its confirmation; `payload` holds name, email and password hash).
 */
export const emailTokens = pgTable(
  'email_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    kind: text('kind').notNull(),
    userId: integer('user_id').references(() => adminUsers.id, { onDelete: 'cascade' }),
    payload: jsonb('payload'),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
  },
  (t) => [index('email_tokens_expires_idx').on(t.expiresAt)],
);

/**
 * The mail outbox: written in the transaction of the change that causes the mail, sent by a
 * worker on any instance. `status`: pending (due at `next_attempt_at`, leased while
 * `lease_until` is in the future), sent, or logged (no SMTP_URL: written to the log instead).
 */
export const mails = pgTable(
  'mails',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** The account the mail is for, 0 for none (sign-up): the claim takes accounts in turn. */
    accountId: integer('account_id').notNull().default(0),
    to: text('to').notNull(),
    subject: text('subject').notNull(),
    text: text('text').notNull(),
    html: text('html').notNull(),
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    leaseUntil: ts('lease_until'),
    lastError: text('last_error'),
    createdAt: ts('created_at').notNull().defaultNow(),
    sentAt: ts('sent_at'),
    /** A mail in a conversation's thread (docs/contracts.md §17): its Message-ID, the headers that thread it, the display name of its From. */
    messageId: text('message_id'),
    conversationId: uuid('conversation_id'),
    /** The AI answer it carries, or the wait an acknowledgement answers (a key derived from it, lib/email/answers.ts): mailed once (unique). */
    responseId: uuid('response_id'),
    threadHeaders: jsonb('thread_headers'),
    /** A member's reply it carries (an email conversation): mailed once (unique). */
    conversationMessageId: uuid('conversation_message_id'),
  },
  (t) => [
    uniqueIndex('mails_response_idx').on(t.responseId),
    uniqueIndex('mails_conversation_message_idx').on(t.conversationMessageId),
    index('mails_conversation_idx').on(t.accountId, t.conversationId).where(sql`conversation_id IS NOT NULL`),
    index('mails_message_idx').on(t.accountId, t.messageId),
    index('mails_claim_idx').on(t.accountId, t.nextAttemptAt, t.id).where(sql`status = 'pending'`),
    index('mails_to_idx').on(t.to, t.createdAt),
    index('mails_created_idx').on(t.createdAt),
  ],
);

/**
 * Mail received by svc's SMTP listener (docs/contracts.md §17): the raw message is stored before the
 * `250`, then processed from here by one instance (a lease), exactly once. `status`: stored (waiting
 * or leased), done, duplicate (the same Message-ID from the same sender was processed), failed.
 */
export const inboundMails = pgTable(
  'inbound_mails',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    accountId: accountRef(),
    envelopeFrom: text('envelope_from').notNull(),
    recipient: text('recipient').notNull(),
    raw: bytea('raw').notNull(),
    size: integer('size').notNull(),
    receivedAt: ts('received_at').notNull().defaultNow(),
    status: text('status').notNull().default('stored'),
    attempts: integer('attempts').notNull().default(0),
    leaseUntil: ts('lease_until'),
    messageId: text('message_id'),
    fromAddress: text('from_address'),
    subject: text('subject'),
    /** The conversation the message became part of (null: none, e.g. a delivery report). */
    conversationId: uuid('conversation_id'),
    /** Its question's client message id in that conversation, and the Message-IDs it replies to: what the answer by mail threads on. */
    clientMessageId: text('client_message_id'),
    threadIds: jsonb('thread_ids'),
    processedAt: ts('processed_at'),
    lastError: text('last_error'),
  },
  (t) => [
    index('inbound_mails_claim_idx').on(t.receivedAt, t.id).where(sql`status = 'stored'`),
    index('inbound_mails_account_idx').on(t.accountId, t.receivedAt),
    index('inbound_mails_message_idx').on(t.accountId, t.messageId),
    index('inbound_mails_conversation_idx').on(t.accountId, t.conversationId).where(sql`conversation_id IS NOT NULL`),
    index('inbound_mails_processed_idx').on(t.processedAt).where(sql`status = 'done'`),
    uniqueIndex('inbound_mails_once_idx').on(t.accountId, t.fromAddress, t.messageId).where(sql`status = 'done'`),
  ],
);

/** An AI answer of a mail conversation, handled once (docs/contracts.md §17): `mailed`, `handed_off` (declined), `not_mailed` (never answered by mail). */
export const emailAnswers = pgTable('email_answers', {
  responseId: uuid('response_id').primaryKey(),
  accountId: accountRef(),
  outcome: text('outcome').notNull(),
  at: ts('at').notNull().defaultNow(),
});

export const apiKeys = pgTable(
  'api_keys',
  {
    keyId: text('key_id').primaryKey(),
    accountId: accountRef(),
    name: text('name').notNull(),
    env: text('env').notNull(),
    secretHash: bytea('secret_hash').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [index('api_keys_account_idx').on(t.accountId)],
);

/**
 * Channel ids belong to their account (docs/contracts.md §3): two accounts may each have a channel 7.
 * Every reference to a channel is the pair (account_id, channel_id).
 */
export const channels = pgTable(
  'channels',
  {
    id: integer('id').notNull(),
    accountId: accountRef(),
    name: text('name').notNull(),
    conversationCount: integer('conversation_count').notNull().default(0),
    responseCount: integer('response_count').notNull().default(0),
  },
  (t) => [primaryKey({ name: 'channels_account_id_pk', columns: [t.accountId, t.id] })],
);

export const conversations = pgTable(
  'conversations',
  {
    id: uuid('id').primaryKey(),
    accountId: accountRef(),
    channelId: integer('channel_id').notNull(),
    title: text('title').notNull(),
    status: text('status').notNull().default('Open'),
    responseCount: integer('response_count').notNull().default(0),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    /** Widget conversations: the visitor that owns it and the client it came through. */
    visitorId: text('visitor_id'),
    clientId: text('client_id'),
    /** Highest sequence number handed out for this conversation's events (see lib/chat). */
    lastSeq: integer('last_seq').notNull().default(0),
    /** Handoff (docs/decisions/handoff.md): every change goes through lib/conversations/status.ts. */
    handledBy: text('handled_by').notNull().default('ai'),
    assigneeId: integer('assignee_id').references(() => adminUsers.id, { onDelete: 'set null' }),
    waitingSince: ts('waiting_since'),
    resolvedAt: ts('resolved_at'),
    snoozedUntil: ts('snoozed_until'),
    /** The first handoff, never cleared; `first_reply_at` the first member reply after it. */
    handedOffAt: ts('handed_off_at'),
    firstReplyAt: ts('first_reply_at'),
    csat: smallint('csat'),
    csatComment: text('csat_comment'),
    visitorEmail: text('visitor_email'),
    /** The tag of the conversation's Reply-To address `<local>+<tag>@…` (mail; made when svc first mails in it). */
    emailTag: text('email_tag'),
    /** The waiting episode whose notification mail was written: mailed when >= waiting_since (lib/mail/handoff-notifier.ts). */
    waitingMailedAt: ts('waiting_mailed_at'),
  },
  (t) => [
    uniqueIndex('conversations_email_tag_idx').on(t.accountId, t.emailTag).where(sql`email_tag IS NOT NULL`),
    foreignKey({ name: 'conversations_channel_fk', columns: [t.accountId, t.channelId], foreignColumns: [channels.accountId, channels.id] }),
    index('conversations_visitor_idx').on(t.visitorId),
    index('conversations_account_created_idx').on(t.accountId, t.createdAt, t.id),
    index('conversations_account_updated_idx').on(t.accountId, t.updatedAt, t.id),
    index('conversations_account_count_idx').on(t.accountId, t.responseCount, t.id),
    index('conversations_account_channel_idx').on(t.accountId, t.channelId, t.id),
    index('conversations_account_id_idx').on(t.accountId, t.id),
    index('conversations_channel_created_idx').on(t.channelId, t.createdAt, t.id),
    index('conversations_title_trgm_idx').using('gin', sql`${t.title} gin_trgm_ops`),
    // The inbox's views: each a partial index in the view's order (db/queries/handoff.ts).
    index('conversations_waiting_idx').on(t.accountId, t.waitingSince, t.id).where(sql`status = 'Waiting'`),
    index('conversations_open_idx').on(t.accountId, t.updatedAt, t.id).where(sql`status = 'Open'`),
    index('conversations_active_assignee_idx').on(t.accountId, t.assigneeId, t.updatedAt, t.id).where(sql`status IN ('Open', 'Waiting', 'Snoozed')`),
    index('conversations_unassigned_idx')
      .on(t.accountId, t.updatedAt, t.id)
      .where(sql`status IN ('Open', 'Waiting', 'Snoozed') AND handled_by = 'human' AND assignee_id IS NULL`),
    index('conversations_resolved_idx').on(t.accountId, t.resolvedAt, t.id).where(sql`status = 'Resolved'`),
    index('conversations_snoozed_due_idx').on(t.snoozedUntil).where(sql`status = 'Snoozed'`),
    index('conversations_account_status_idx').on(t.accountId, t.status, t.createdAt, t.id),
    index('conversations_visitor_email_idx').on(t.accountId, sql`lower(${t.visitorEmail})`).where(sql`visitor_email IS NOT NULL`),
  ],
);

/**
 * One answered (or failed) question. A response is also the pair of messages the transcript
 * shows: the user message (question) and the assistant message (answer), whose ids live here.
 */
export const responses = pgTable(
  'responses',
  {
    id: uuid('id').primaryKey(),
    accountId: accountRef(),
    conversationId: conversationRef(),
    channelId: integer('channel_id').notNull(),
    question: text('question').notNull(),
    answer: text('answer').notNull(),
    likes: integer('likes').notNull().default(0),
    dislikes: integer('dislikes').notNull().default(0),
    comments: integer('comments').notNull().default(0),
    createdAt: ts('created_at').notNull(),
    /**
     * When the response last changed in this service (stored answer, feedback, comment, an import
     * that inserts or changes it); `updated_since` filters on it. Not part of the response record.
     * NULL only for rows older than the column: they count as changed at `created_at` (see
     * RESPONSE_CHANGED_AT in db/queries/responses.ts), so adding it rewrote no row.
     */
    updatedAt: ts('updated_at').defaultNow(),
    questionMessageId: uuid('question_message_id').notNull().default(sql`gen_random_uuid()`),
    answerMessageId: uuid('answer_message_id').notNull().default(sql`gen_random_uuid()`),
    error: text('error'),
    /** The widget's id for the question, so a retried ask stores one response. */
    clientMessageId: text('client_message_id'),
    /** Sources the answer engine used (document ids, names, passages). */
    sources: jsonb('sources'),
    /** The engine found nothing relevant and gave the "no answer" text (docs/contracts.md §12). */
    declined: boolean('declined').notNull().default(false),
  },
  (t) => [
    foreignKey({ name: 'responses_channel_fk', columns: [t.accountId, t.channelId], foreignColumns: [channels.accountId, channels.id] }),
    uniqueIndex('responses_conversation_client_message_idx').on(t.conversationId, t.clientMessageId),
    index('responses_account_created_idx').on(t.accountId, t.createdAt, t.id),
    index('responses_account_id_idx').on(t.accountId, t.id),
    index('responses_account_changed_idx').on(t.accountId, sql`COALESCE(${t.updatedAt}, ${t.createdAt})`, t.id),
    index('responses_account_likes_idx').on(t.accountId, t.likes, t.id),
    index('responses_account_dislikes_idx').on(t.accountId, t.dislikes, t.id),
    index('responses_account_comments_idx').on(t.accountId, t.comments, t.id),
    index('responses_account_channel_idx').on(t.accountId, t.channelId, t.id),
    index('responses_account_conversation_idx').on(t.accountId, t.conversationId, t.id),
    index('responses_channel_created_idx').on(t.channelId, t.createdAt, t.id),
    index('responses_conversation_created_idx').on(t.conversationId, t.createdAt, t.id),
    index('responses_question_trgm_idx').using('gin', sql`${t.question} gin_trgm_ops`),
    index('responses_answer_trgm_idx').using('gin', sql`${t.answer} gin_trgm_ops`),
    // Insights (docs/decisions/insights.md): "no dislike" per conversation, and the declined answers.
    index('responses_disliked_conversation_idx').on(t.conversationId).where(sql`dislikes > 0`),
    index('responses_declined_idx').on(t.accountId, t.createdAt, t.id).where(sql`declined`),
  ],
);

/**
 * Visitor uploads, attached to a message once a question uses them. The bytes live in
 * upload_chunks (every instance reads them). `status` is 'receiving' while the body streams in
 * (its `size` is then the bytes reserved against the account's quota) and 'complete' after;
 * `storage_name` is set only for files still in an old local DATA_DIR/uploads, moved in at start-up.
 */
export const attachments = pgTable(
  'attachments',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    accountId: accountRef(),
    conversationId: uuid('conversation_id').references(() => conversations.id),
    messageId: uuid('message_id'),
    filename: text('filename').notNull(),
    contentType: text('content_type').notNull(),
    size: integer('size').notNull(),
    storageName: text('storage_name'),
    createdAt: ts('created_at').notNull().defaultNow(),
    clientId: text('client_id'),
    visitorId: text('visitor_id'),
    status: text('status').notNull().default('complete'),
  },
  (t) => [
    index('attachments_conversation_idx').on(t.conversationId),
    index('attachments_message_idx').on(t.messageId),
    index('attachments_account_idx').on(t.accountId),
    index('attachments_unattached_idx').on(t.createdAt).where(sql`${t.messageId} IS NULL`),
  ],
);

/** An upload's bytes in order, 256 KiB a row: streamed in and out, never a whole file in memory. */
export const uploadChunks = pgTable(
  'upload_chunks',
  {
    uploadId: uuid('upload_id')
      .notNull()
      .references(() => attachments.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    data: bytea('data').notNull(),
  },
  (t) => [primaryKey({ columns: [t.uploadId, t.seq] })],
);

/** Widget clients: public client_id, hashed secret, registered domains, the channel they feed. */
export const widgetClients = pgTable(
  'widget_clients',
  {
    id: text('id').primaryKey(),
    accountId: accountRef(),
    secretHash: bytea('secret_hash').notNull(),
    /** The admin's label for the client (existing clients were named after their first domain). */
    name: text('name').notNull().default(''),
    domains: text('domains').array().notNull(),
    channelId: integer('channel_id').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    secretRotatedAt: ts('secret_rotated_at'),
    /** The widget's look and words set on /widget (lib/widget-clients/appearance.ts validates them). */
    appearance: jsonb('appearance').notNull().default({}),
  },
  (t) => [
    foreignKey({ name: 'widget_clients_channel_fk', columns: [t.accountId, t.channelId], foreignColumns: [channels.accountId, channels.id] }),
    index('widget_clients_account_idx').on(t.accountId),
  ],
);

/** HMAC keys for widget tokens, by key id; the newest unretired one signs, all unretired verify. */
export const widgetSigningKeys = pgTable('widget_signing_keys', {
  kid: text('kid').primaryKey(),
  secret: text('secret').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
  retiredAt: ts('retired_at'),
});

/**
 * The messages of a conversation that are not halves of a response (docs/decisions/handoff.md):
 * `visitor` (while a person handles it), `agent`, `system`, `note` (internal). `client_message_id`
 * makes a visitor's retry, or a member's resent reply or note, store one row (unique per
 * conversation for visitors and for members separately); `seen_at` is when the visitor's widget showed it.
 */
export const conversationMessages = pgTable(
  'conversation_messages',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    /** Orders messages written in the same millisecond (one transaction writes "joined" then the reply). */
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    accountId: accountRef(),
    conversationId: conversationRef(),
    author: text('author').notNull(),
    authorUserId: integer('author_user_id').references(() => adminUsers.id, { onDelete: 'set null' }),
    authorName: text('author_name'),
    text: text('text').notNull(),
    clientMessageId: text('client_message_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    seenAt: ts('seen_at'),
    mailedAt: ts('mailed_at'),
  },
  (t) => [
    index('conversation_messages_conversation_idx').on(t.conversationId, t.createdAt, t.seq),
    uniqueIndex('conversation_messages_visitor_client_message_idx').on(t.conversationId, t.clientMessageId).where(sql`author = 'visitor'`),
    uniqueIndex('conversation_messages_member_client_message_idx').on(t.conversationId, t.clientMessageId).where(sql`author IN ('agent', 'note')`),
    index('conversation_messages_unseen_idx').on(t.createdAt).where(sql`author = 'agent' AND seen_at IS NULL AND mailed_at IS NULL`),
  ],
);

/**
 * How many conversations of an account have each status, handler and assignee (0 = nobody): the
 * inbox's counts. Kept exact by the triggers of migration 0015 on every write to conversations.
 */
export const conversationCounts = pgTable(
  'conversation_counts',
  {
    accountId: integer('account_id').notNull(),
    status: text('status').notNull(),
    handledBy: text('handled_by').notNull(),
    assigneeId: integer('assignee_id').notNull().default(0),
    n: bigint('n', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ name: 'conversation_counts_pk', columns: [t.accountId, t.status, t.handledBy, t.assigneeId] })],
);

/** Handoff settings of an account (absent row = defaults; `hours` null = open every day, all day). */
export const handoffSettings = pgTable('handoff_settings', {
  accountId: integer('account_id')
    .primaryKey()
    .references(() => accounts.id),
  enabled: boolean('enabled').notNull().default(true),
  timeZone: text('time_zone').notNull().default('UTC'),
  hours: jsonb('hours'),
  awayText: text('away_text').notNull().default(''),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/** Canned replies of an account's inbox, typed as `/shortcut`. */
export const cannedReplies = pgTable(
  'canned_replies',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    accountId: accountRef(),
    shortcut: text('shortcut').notNull(),
    text: text('text').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('canned_replies_shortcut_idx').on(t.accountId, t.shortcut)],
);

/** Persisted conversation events (questions, finished answers, failures, feedback) by sequence. */
export const conversationEvents = pgTable(
  'conversation_events',
  {
    conversationId: conversationRef(),
    seq: integer('seq').notNull(),
    kind: text('kind').notNull(),
    payload: jsonb('payload').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.seq] })],
);

/**
 * Answers in flight, owned by one instance under a lease (docs/contracts.md §9). The row is written in the
 * same statement as the question event (an acknowledged ask is durable), renewed by its owner,
 * taken over by a survivor once `lease_until` passes, and closed (`finished_at`) in the same
 * statement that stores the response. It also makes a retried ask idempotent on every instance.
 */
export const chatAnswers = pgTable(
  'chat_answers',
  {
    responseId: uuid('response_id').primaryKey(),
    conversationId: conversationRef(),
    accountId: accountRef(),
    clientMessageId: text('client_message_id').notNull(),
    /** question, channel_id, question/answer message ids: what a survivor needs to answer again. */
    job: jsonb('job').notNull(),
    owner: text('owner').notNull(),
    leaseUntil: ts('lease_until').notNull(),
    attempts: integer('attempts').notNull().default(1),
    createdAt: ts('created_at').notNull().defaultNow(),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    uniqueIndex('chat_answers_conversation_client_message_idx').on(t.conversationId, t.clientMessageId),
    index('chat_answers_open_lease_idx').on(t.leaseUntil).where(sql`finished_at IS NULL`),
  ],
);

/** One like or dislike per visitor and response (toggled); counts live on the response. */
export const responseFeedback = pgTable(
  'response_feedback',
  {
    responseId: uuid('response_id')
      .notNull()
      .references(() => responses.id),
    visitorId: text('visitor_id').notNull(),
    value: smallint('value').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.responseId, t.visitorId] })],
);

export const responseComments = pgTable(
  'response_comments',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    accountId: accountRef(),
    responseId: uuid('response_id')
      .notNull()
      .references(() => responses.id),
    visitorId: text('visitor_id'),
    body: text('body').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('response_comments_response_idx').on(t.responseId)],
);

/** Knowledge-base documents; conversation_id set = a visitor's upload, usable in that conversation only. */
export const kbDocuments = pgTable(
  'kb_documents',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    accountId: accountRef(),
    conversationId: uuid('conversation_id').references(() => conversations.id),
    attachmentId: uuid('attachment_id'),
    filename: text('filename').notNull(),
    /** What visitors see: the document's first heading, else its file name without the extension. */
    title: text('title').notNull().default(''),
    contentType: text('content_type').notNull(),
    size: integer('size').notNull(),
    chunks: integer('chunks').notNull().default(0),
    /** The versions of one document share it (the first version's id); at most one has no superseded_at. */
    lineageId: uuid('lineage_id').notNull(),
    /** Set when a newer version replaced this one: it no longer answers, and "Restore" brings it back. */
    supersededAt: ts('superseded_at'),
    /** A page imported from a website (docs/contracts.md §16): its site, address and text hash. */
    siteId: uuid('site_id').references(() => kbSites.id, { onDelete: 'cascade' }),
    sourceUrl: text('source_url'),
    contentHash: text('content_hash'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('kb_documents_account_idx').on(t.accountId, t.conversationId),
    index('kb_documents_lineage_idx').on(t.lineageId),
    index('kb_documents_site_idx').on(t.siteId),
  ],
);

/** A website imported into the knowledge base; its pages are kb_documents with its site_id. */
export const kbSites = pgTable(
  'kb_sites',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    accountId: accountRef(),
    url: text('url').notNull(),
    /** queued | crawling | done | failed */
    status: text('status').notNull().default('queued'),
    pages: integer('pages').notNull().default(0),
    error: text('error'),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('kb_sites_account_url_idx').on(t.accountId, t.url)],
);

export const kbChunks = pgTable(
  'kb_chunks',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    accountId: accountRef(),
    documentId: uuid('document_id')
      .notNull()
      .references(() => kbDocuments.id, { onDelete: 'cascade' }),
    ordinal: integer('ordinal').notNull(),
    content: text('content').notNull(),
    /** The document title and the headings above the passage; indexed with weight A (ranking). */
    context: text('context').notNull().default(''),
    tsv: tsvector('tsv').notNull().generatedAlwaysAs(sql`setweight(to_tsvector('english', context), 'A') || to_tsvector('english', content)`),
  },
  (t) => [index('kb_chunks_document_idx').on(t.documentId), index('kb_chunks_tsv_idx').using('gin', t.tsv)],
);

/** The bot of an account (docs/contracts.md §12); no row = the defaults of lib/bot/settings.ts. */
export const botSettings = pgTable('bot_settings', {
  accountId: integer('account_id')
    .primaryKey()
    .references(() => accounts.id),
  instructions: text('instructions').notNull().default(''),
  noAnswerText: text('no_answer_text').notNull().default(''),
  model: text('model').notNull().default(''),
  showSources: boolean('show_sources').notNull().default(true),
  /** The account's own OpenAI-compatible endpoint ('' = the operator's LLM_* settings or the built-in engine). */
  endpointBaseUrl: text('endpoint_base_url').notNull().default(''),
  /** Its key, sealed by lib/core/secrets.ts; never shown again. */
  endpointApiKey: text('endpoint_api_key'),
  /** The endpoint's embedding model ('' = retrieval by BM25 alone). */
  embeddingModel: text('embedding_model').notNull().default(''),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/** A passage's embedding under one model of the account's endpoint (lib/answers/embeddings.ts). */
export const kbChunkEmbeddings = pgTable(
  'kb_chunk_embeddings',
  {
    chunkId: uuid('chunk_id')
      .primaryKey()
      .references(() => kbChunks.id, { onDelete: 'cascade' }),
    accountId: accountRef(),
    model: text('model').notNull(),
    embedding: real('embedding').array().notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('kb_chunk_embeddings_account_idx').on(t.accountId, t.model)],
);

/** Where widgets run: connections per client, origin, widget version and UTC day. */
export const widgetSightings = pgTable(
  'widget_sightings',
  {
    clientId: text('client_id').notNull(),
    accountId: accountRef(),
    origin: text('origin').notNull(),
    widgetVersion: text('widget_version').notNull(),
    day: date('day').notNull(),
    connections: integer('connections').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.origin, t.widgetVersion, t.day] }), index('widget_sightings_account_idx').on(t.accountId, t.day)],
);

/**
 * Refused widget connections ("why does my widget not appear"): one row per client, origin,
 * stage (token request or socket handshake) and reason, with a count; bounded per client.
 */
export const widgetRefusals = pgTable(
  'widget_refusals',
  {
    clientId: text('client_id').notNull(),
    accountId: accountRef(),
    origin: text('origin').notNull(),
    stage: text('stage').notNull(),
    reason: text('reason').notNull(),
    detail: text('detail').notNull(),
    count: integer('count').notNull().default(0),
    firstSeenAt: ts('first_seen_at').notNull().defaultNow(),
    lastSeenAt: ts('last_seen_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.origin, t.stage, t.reason] }), index('widget_refusals_account_idx').on(t.accountId, t.lastSeenAt)],
);

/** Generated secrets of the deployment (e.g. the session secret when NEXTAUTH_SECRET is unset). */
export const settings = pgTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});

/** Where each widget release track points; absent row = the default in lib/widget/releases.json. */
export const widgetTracks = pgTable('widget_tracks', {
  track: text('track').primaryKey(),
  version: text('version').notNull(),
  /** Earlier versions, oldest first (the last one is what a rollback returns to). */
  history: text('history').array().notNull().default(sql`'{}'::text[]`),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});
/**
 * Dashboard sessions (issue 8 item 5): the session JWT names one row, checked on every read;
 * signing out revokes the row, a password change revokes every row of the user.
 */
export const adminSessions = pgTable(
  'admin_sessions',
  {
    id: text('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => adminUsers.id, { onDelete: 'cascade' }),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
  },
  (t) => [index('admin_sessions_user_idx').on(t.userId)],
);

/**
 * Webhook endpoints of an account (docs/contracts.md §11). The signing secret is kept as is (it signs);
 * after a rotation the previous secret also signs until `previous_secret_until`. `failing_since`
 * is the first failed attempt after the last success; `paused_at` set = nothing is sent (an
 * admin's pause, or the automatic one of lib/webhooks/rules.ts, with its reason).
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    accountId: accountRef(),
    url: text('url').notNull(),
    events: text('events').array().notNull(),
    secret: text('secret').notNull(),
    previousSecret: text('previous_secret'),
    previousSecretUntil: ts('previous_secret_until'),
    pausedAt: ts('paused_at'),
    pauseReason: text('pause_reason'),
    failingSince: ts('failing_since'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('webhook_endpoints_account_idx').on(t.accountId, t.createdAt)],
);

/**
 * The outbox: one row per event, written in the transaction of the change that causes it. `id` is
 * the `webhook-id`; `body` the exact JSON sent (text: jsonb would reorder the record's keys);
 * `seq` orders the events of one conversation (they are written under its row lock).
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: text('id').primaryKey(),
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    accountId: accountRef(),
    type: text('type').notNull(),
    conversationId: uuid('conversation_id').notNull(),
    body: text('body').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('webhook_events_account_idx').on(t.accountId, t.createdAt),
    index('webhook_events_created_idx').on(t.createdAt),
    index('webhook_events_conversation_idx').on(t.conversationId),
  ],
);

/**
 * One event to one endpoint: `pending` (due at `next_attempt_at`; leased by the instance sending
 * it while `lease_until` is in the future), `held` (its endpoint is paused: outside every index
 * the claim reads), `delivered`, or `failed` (its retry schedule ran out). The last attempt's
 * outcome is kept for the delivery log.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    accountId: accountRef(),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventId: text('event_id')
      .notNull()
      .references(() => webhookEvents.id, { onDelete: 'cascade' }),
    conversationId: uuid('conversation_id').notNull(),
    eventSeq: bigint('event_seq', { mode: 'number' }).notNull(),
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    leaseOwner: text('lease_owner'),
    leaseUntil: ts('lease_until'),
    lastAttemptAt: ts('last_attempt_at'),
    lastStatusCode: integer('last_status_code'),
    lastLatencyMs: integer('last_latency_ms'),
    lastError: text('last_error'),
    deliveredAt: ts('delivered_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_event_endpoint_idx').on(t.eventId, t.endpointId),
    index('webhook_deliveries_claim_idx').on(t.endpointId, t.nextAttemptAt).where(sql`status = 'pending'`),
    index('webhook_deliveries_order_idx').on(t.endpointId, t.conversationId, t.eventSeq).where(sql`status = 'pending'`),
    index('webhook_deliveries_held_idx').on(t.endpointId, t.createdAt).where(sql`status = 'held'`),
    index('webhook_deliveries_log_idx').on(t.endpointId, t.createdAt),
  ],
);

/** A curated entry of the knowledge base (docs/decisions/insights.md): the bot answers with it first for these and similar questions. */
export const curatedAnswers = pgTable(
  'curated_answers',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    accountId: accountRef(),
    questions: text('questions').array().notNull(),
    answer: text('answer').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('curated_answers_account_idx').on(t.accountId, t.createdAt)],
);

/** A group of words the account's visitors use for the same thing (postage, shipping): a question using one is searched with all. */
export const synonymGroups = pgTable(
  'synonym_groups',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    accountId: accountRef(),
    words: text('words').array().notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('synonym_groups_account_idx').on(t.accountId, t.createdAt)],
);

/** A content-gap question an owner dismissed; it shows again only when asked after `dismissed_at`. */
export const gapDismissals = pgTable(
  'gap_dismissals',
  {
    accountId: accountRef(),
    question: text('question').notNull(),
    dismissedAt: ts('dismissed_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.question] })],
);

/**
 * Insights per account, channel (0: all channels) and UTC creation day (docs/decisions/insights.md):
 * the figures of conversations and responses created that day, the day's exact medians, and
 * histograms (a bucket to [count, sum, min, max] of its seconds) for a window's medians. Kept right by insights_dirty_days; `valid_until` is when an open conversation of the
 * day turns idle (AI-resolved), after which the row is recomputed.
 */
export const insightsDaily = pgTable(
  'insights_daily',
  {
    accountId: integer('account_id').notNull(),
    channelId: integer('channel_id').notNull(),
    day: date('day').notNull(),
    conversations: integer('conversations').notNull().default(0),
    aiResolved: integer('ai_resolved').notNull().default(0),
    aiInvolved: integer('ai_involved').notNull().default(0),
    aiResolvedConfirmed: integer('ai_resolved_confirmed').notNull().default(0),
    handoffs: integer('handoffs').notNull().default(0),
    csatAiResponses: integer('csat_ai_responses').notNull().default(0),
    csatAiSum: integer('csat_ai_sum').notNull().default(0),
    csatAiHigh: integer('csat_ai_high').notNull().default(0),
    csatHumanResponses: integer('csat_human_responses').notNull().default(0),
    csatHumanSum: integer('csat_human_sum').notNull().default(0),
    csatHumanHigh: integer('csat_human_high').notNull().default(0),
    medianFirstResponseSeconds: doublePrecision('median_first_response_seconds'),
    medianResolutionSeconds: doublePrecision('median_resolution_seconds'),
    firstResponseHist: jsonb('first_response_hist').notNull().default(sql`'{}'::jsonb`),
    resolutionHist: jsonb('resolution_hist').notNull().default(sql`'{}'::jsonb`),
    declinedAnswers: integer('declined_answers').notNull().default(0),
    likes: bigint('likes', { mode: 'number' }).notNull().default(0),
    dislikes: bigint('dislikes', { mode: 'number' }).notNull().default(0),
    validUntil: ts('valid_until'),
  },
  (t) => [primaryKey({ name: 'insights_daily_pk', columns: [t.accountId, t.day, t.channelId] })],
);

/**
 * The days whose insights_daily rows are out of date: a row per writing transaction (xid) and day,
 * inserted by the triggers of migration 0022 on conversations and responses, deleted by the refresh.
 */
export const insightsDirtyDays = pgTable(
  'insights_dirty_days',
  {
    accountId: integer('account_id').notNull(),
    day: date('day').notNull(),
    xid: bigint('xid', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ name: 'insights_dirty_days_pk', columns: [t.accountId, t.day, t.xid] })],
);

/**
 * The account's audit log (docs/contracts.md §18): append-only. Migration 0030's triggers refuse
 * UPDATE and TRUNCATE, and DELETE unless the transaction set `svc.audit_delete` (the retention
 * pruner and account deletion, db/queries/audit.ts). `actor` is a member's email, `cli` or `system`.
 */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    accountId: accountRef(),
    at: ts('at').notNull().defaultNow(),
    actor: text('actor').notNull(),
    action: text('action').notNull(),
    target: text('target').notNull(),
    ip: text('ip'),
  },
  (t) => [
    index('audit_log_account_at_idx').on(t.accountId, t.at.desc(), t.id.desc()),
    index('audit_log_account_action_idx').on(t.accountId, t.action, t.at.desc(), t.id.desc()),
    index('audit_log_at_idx').on(t.at, t.id),
  ],
);

/**
 * An answer test (docs/contracts.md §20): a question and what the answer must do. `answers from`
 * names its source by `source_kind` and `source_id` (a document's lineage, so a replaced version
 * still counts, or a curated answer's id) and keeps the source's name at the time in `value`; a
 * deleted source leaves the case failing, never dangling. The last two runs' results are kept.
 */
export const answerTestCases = pgTable(
  'answer_test_cases',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    accountId: accountRef(),
    question: text('question').notNull(),
    /** answers from | declines | mentions */
    expect: text('expect').notNull(),
    value: text('value').notNull().default(''),
    /** document | curated (only for `answers from`) */
    sourceKind: text('source_kind'),
    sourceId: uuid('source_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    /** The order cases were added in (several in one import share a created_at). */
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    lastPassed: boolean('last_passed'),
    lastFirstSource: text('last_first_source'),
    lastAnswer: text('last_answer'),
    lastRunAt: ts('last_run_at'),
    /** The run before the last: "Newly failing" is prev_passed and not last_passed. */
    prevPassed: boolean('prev_passed'),
  },
  (t) => [index('answer_test_cases_account_idx').on(t.accountId, t.seq)],
);

/** Per account: the version of its knowledge-base documents, counted by a trigger on kb_documents (migration 0033); the vocabulary's key. */
export const kbVersions = pgTable('kb_versions', {
  accountId: accountRef().primaryKey(),
  version: bigint('version', { mode: 'number' }).notNull().default(0),
});

/**
 * Per account: knowledge-base changes not yet tested (`kb_version` counted by triggers on
 * documents, curated answers and synonyms; `tested_version` the one the last run started from),
 * the run's lease (one run per account across instances) and the last run's totals.
 */
export const answerTestState = pgTable('answer_test_state', {
  accountId: accountRef().primaryKey(),
  kbVersion: bigint('kb_version', { mode: 'number' }).notNull().default(0),
  testedVersion: bigint('tested_version', { mode: 'number' }).notNull().default(0),
  kbChangedAt: ts('kb_changed_at'),
  dueSince: ts('due_since'),
  leaseUntil: ts('lease_until'),
  lastRunAt: ts('last_run_at'),
  lastTrigger: text('last_trigger'),
  lastPassedCount: integer('last_passed_count'),
  lastFailedCount: integer('last_failed_count'),
});
/** Past days a retention or erasure deleted conversations of (migration 0028): their insights_daily rows are kept as they were then, never recomputed. */
export const insightsKeptDays = pgTable(
  'insights_kept_days',
  {
    accountId: integer('account_id').notNull(),
    day: date('day').notNull(),
  },
  (t) => [primaryKey({ name: 'insights_kept_days_pk', columns: [t.accountId, t.day] })],
);
