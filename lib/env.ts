import { z } from 'zod';
import { describeIssues, issueParams } from './zod-issues';

/** The only reader of process.env. Parsed once; a bad value stops the process with a clear message. */
const boolish = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1).default('0.0.0.0'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
    .optional(),
  /** A read replica (may name several hosts) for exports, insights and the Customer API's lists (CONTRACTS §19); ignored without DATABASE_URL. */
  DATABASE_READ_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
    .optional(),
  /** Replica lag above which those reads go to the primary until it catches up. */
  DATABASE_READ_MAX_LAG_SECONDS: z.coerce.number().min(0).max(86_400).default(30),
  DATA_DIR: z.string().min(1).default('./.data'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  SVC_DEMO: boolish.default(true),
  SVC_ENV: z.enum(['live', 'test']).default('live'),
  /** How often the in-memory last_used_at marks of API keys are written (ms). */
  API_KEY_USAGE_FLUSH_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  LOG_REQUESTS: boolish.default(false),
  /** Widget access-token lifetime (docs/contracts.md §6: 24 h). */
  WIDGET_TOKEN_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 86400)
    .default(86400),
  /** Optional JSON [{"kid":"…","secret":"…(≥32 chars)"}]; first signs, all verify. Unset: keys kept in the database. */
  WIDGET_SIGNING_KEYS: z.string().optional(),
  TOKEN_RATE_PER_CLIENT_PER_MINUTE: z.coerce.number().int().min(1).default(1200),
  TOKEN_RATE_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  TOKEN_RATE_PER_VISITOR_PER_MINUTE: z.coerce.number().int().min(1).default(20),
  /** Socket events a visitor may send per 10 seconds. */
  SOCKET_EVENTS_PER_10S: z.coerce.number().int().min(1).default(40),
  UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1024 * 1024 * 1024)
    .default(10 * 1024 * 1024),
  UPLOADS_PER_VISITOR_PER_MINUTE: z.coerce.number().int().min(1).default(20),
  /** Uploads: per client and per client address too (a new visitor id starts no new budget). */
  UPLOADS_PER_CLIENT_PER_MINUTE: z.coerce.number().int().min(1).default(300),
  UPLOADS_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  /** Bytes of uploads an account may hold (attached or waiting to be). */
  UPLOAD_QUOTA_BYTES_PER_ACCOUNT: z.coerce
    .number()
    .int()
    .min(1)
    .default(1024 * 1024 * 1024),
  /** Uploads never attached to a question are deleted after this long. */
  UPLOAD_UNATTACHED_TTL_SECONDS: z.coerce.number().int().min(1).default(86400),
  /** Visitor attachments indexed as documents: at most this many per conversation and per account a day. */
  ATTACHMENT_DOCUMENTS_PER_CONVERSATION: z.coerce.number().int().min(0).default(10),
  ATTACHMENT_DOCUMENTS_PER_ACCOUNT_PER_DAY: z.coerce.number().int().min(0).default(1000),
  /** Documents are read in worker threads under these limits (lib/documents). Unset workers: cores − 1, 1 to 4. */
  DOCUMENT_WORKERS: z.coerce.number().int().min(1).max(64).optional(),
  DOCUMENT_QUEUE_MAX: z.coerce.number().int().min(0).default(32),
  DOCUMENT_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  DOCUMENT_WORKER_MEMORY_MB: z.coerce.number().int().min(32).max(4096).default(256),
  DOCUMENT_MAX_INFLATED_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(64 * 1024 * 1024),
  DOCUMENT_MAX_TEXT_CHARS: z.coerce.number().int().min(1000).default(2_000_000),
  /** OpenAI-compatible chat completions; unset = the built-in knowledge-base engine. */
  LLM_BASE_URL: z.string().url().optional(),
  LLM_API_KEY: z.string().optional(),
  LLM_MODEL: z.string().default('gpt-4o-mini'),
  /** Dashboard sessions (next-auth). Unset: a generated secret kept in the database. */
  NEXTAUTH_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  /** The dashboard's public address for next-auth; default http://localhost:PORT. */
  NEXTAUTH_URL: z.string().url().optional(),
  /** Sign-in throttling (OWASP): failures per 15 minutes per (email, address) before that pair is refused, */
  SIGNIN_FAILURES_PER_EMAIL_AND_IP: z.coerce.number().int().min(1).default(5),
  /** per address (any email) before the address is refused, */
  SIGNIN_FAILURES_PER_IP: z.coerce.number().int().min(1).default(100),
  /** and per email (from anywhere) before every attempt for it is slowed down (never refused), up to SIGNIN_SLOWDOWN_MAX_MS. */
  SIGNIN_FAILURES_PER_EMAIL: z.coerce.number().int().min(1).default(5),
  SIGNIN_SLOWDOWN_MAX_MS: z.coerce.number().int().min(0).max(60_000).default(10_000),
  /** Dashboard session lifetime (absolute, from sign-in). */
  SESSION_MAX_AGE_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 86400)
    .default(12 * 3600),
  /** The audit log (docs/contracts.md §18) keeps an entry this many days; a background loop deletes older ones. */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(365),
  LLM_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /** Earlier turns of a conversation sent to the model, in tokens (estimated at 4 characters each). */
  LLM_HISTORY_TOKENS: z.coerce.number().int().min(0).default(2000),
  /** Retries of a model request on 429, 5xx and connection errors (within LLM_TIMEOUT_MS). */
  LLM_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  /** Several instances (docs/contracts.md §9): Redis for fan-out, shared limits and cache invalidation. */
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
    .optional(),
  /** Prefix of every Redis key and channel of this deployment (tests give each run its own). */
  REDIS_PREFIX: z.string().default('svc:'),
  /** Chat across instances (chatcore): lease of an in-flight answer; a survivor takes it over once it lapses. */
  CHAT_ANSWER_LEASE_SECONDS: z.coerce.number().int().min(2).max(300).default(15),
  /** SIGTERM drain: how long in-flight answers may take to finish before the process exits anyway. */
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).max(3600).default(30),
  /** Widget sockets per client address and per widget client on one instance; conversations per socket. */
  WIDGET_SOCKETS_PER_ADDRESS: z.coerce.number().int().min(1).default(500),
  WIDGET_SOCKETS_PER_CLIENT: z.coerce.number().int().min(1).default(20_000),
  WIDGET_SUBSCRIPTIONS_PER_SOCKET: z.coerce.number().int().min(1).default(20),
  /** Questions per minute per visitor, per client address and per widget client (shared by every instance). */
  ASKS_PER_MINUTE_PER_VISITOR: z.coerce.number().int().min(1).default(20),
  ASKS_PER_MINUTE_PER_ADDRESS: z.coerce.number().int().min(1).default(300),
  ASKS_PER_MINUTE_PER_CLIENT: z.coerce.number().int().min(1).default(6000),
  /** Unset: the client address is the socket peer. A hop count or a comma-separated CIDR list (docs/contracts.md §9). */
  TRUST_PROXY: z.string().optional(),
  /** Webhooks (docs/contracts.md §11): the retry schedule and the automatic pause are multiples of this (lib/webhooks/rules.ts). */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().min(0.001).max(3_600_000).default(5000),
  /** How long one delivery attempt may take before it counts as failed. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(1).max(60_000).default(10_000),
  /** Alias of OUTBOUND_ALLOW_PRIVATE_NETWORKS (its earlier name). */
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: boolish.default(false),
  /** 1: count every SQL statement this process sends (svc_db_statements_total; the per-answer cost check and the chat bench read it). */
  DATABASE_COUNT_STATEMENTS: boolish.default(false),
  /** `json`: structured pino logs with request ids on stdout; `text` (default): plain lines. */
  LOG_FORMAT: z.enum(['text', 'json']).default('text'),
  /** Set: GET /metrics also answers non-loopback peers that send `Authorization: Bearer <token>`. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** 1: outbound URLs (webhooks) may point at loopback, private, link-local and metadata addresses (tests, self-hosted). */
  OUTBOUND_ALLOW_PRIVATE_NETWORKS: boolish.default(false),
  /** Website import (docs/contracts.md §16): pages per crawl, crawl starts per account per hour, whole-crawl time limit. */
  KB_CRAWL_MAX_PAGES: z.coerce.number().int().min(1).max(10_000).default(200),
  KB_CRAWLS_PER_HOUR: z.coerce.number().int().min(1).max(1000).default(10),
  KB_CRAWL_MAX_SECONDS: z.coerce.number().min(1).max(3600).default(300),
  /** Exports (docs/contracts.md §10): at once per account (across instances with Redis), per instance (unset: half the pool, never more), stall limit. */
  EXPORTS_PER_ACCOUNT: z.coerce.number().int().min(1).max(100).default(2),
  EXPORTS_PER_INSTANCE: z.coerce.number().int().min(1).max(100).optional(),
  EXPORT_STALL_SECONDS: z.coerce.number().min(0.5).max(3600).default(30),
  /** PostgreSQL statement_timeout of the server's queries, and the longer one of an export's statement (docs/decisions/exports.md). */
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(15_000),
  EXPORT_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(1000).max(86_400_000).default(3_600_000),
  /** Team mail (docs/contracts.md §13): smtp://user:pass@host:port or smtps://…; unset = each mail is logged and kept in the outbox. */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://')
    .refine((s) => URL.canParse(s), 'must be a URL: percent-encode / # ? @ and % in the user name and password')
    .optional(),
  MAIL_FROM: z.string().min(3).default('svc <no-reply@localhost>'),
  /** Inbound mail (docs/contracts.md §17): the SMTP listener's port (unset: no listener), its address (default HOST), the domain of the accounts' addresses. */
  INBOUND_SMTP_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  INBOUND_SMTP_HOST: z.string().min(1).optional(),
  INBOUND_MAIL_DOMAIN: z
    .string()
    .regex(/^[a-z0-9.-]+$/i, 'must be a domain name')
    .default('localhost'),
  /** A message over this many bytes is refused with 552. */
  INBOUND_MAIL_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(200 * 1024 * 1024)
    .default(26_214_400),
  /** STARTTLS: the certificate and key files (PEM); unset: plain SMTP only. */
  INBOUND_SMTP_TLS_CERT: z.string().min(1).optional(),
  INBOUND_SMTP_TLS_KEY: z.string().min(1).optional(),
  /** Messages accepted per sending address and per account (answered 451, try later, beyond). */
  /** How long an instance holds a stored message it processes; another takes it over after (its instance died). */
  INBOUND_MAIL_LEASE_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /** The AI's answers mailed to one address per hour at most; beyond, answers stay in the inbox (no loops). */
  EMAIL_ANSWERS_PER_SENDER_PER_HOUR: z.coerce.number().int().min(0).max(1000).default(5),
  INBOUND_MAILS_PER_SENDER_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(30),
  INBOUND_MAILS_PER_ACCOUNT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(600),
  /** A failed mail is retried after this, doubling each time up to an hour (lib/mail/worker.ts). */
  MAIL_RETRY_BASE_MS: z.coerce.number().min(1).max(3_600_000).default(5000),
  /** How long an instance holds a mail it sends; a mail held by an instance that died is sent by another after this. */
  MAIL_LEASE_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /** `open`: anyone can create an account at /signup; `closed`: accounts come from the CLI. */
  SIGNUP: z.enum(['open', 'closed']).default('closed'),
  /** Invitations an account may send per hour; password-reset and sign-up mails to one address per hour. */
  INVITATIONS_PER_HOUR: z.coerce.number().int().min(1).default(20),
  MAILS_PER_ADDRESS_PER_HOUR: z.coerce.number().int().min(1).default(3),
  /** Handoff mail (lib/mail/handoff-notifier.ts): a conversation Waiting this long emails the members who asked for it. */
  HANDOFF_EMAIL_AFTER_SECONDS: z.coerce.number().min(0.1).max(86_400).default(120),
  /** A member gets at most one waiting mail this often; what waits meanwhile comes in their next mail, listed. */
  HANDOFF_EMAIL_MEMBER_WINDOW_SECONDS: z.coerce.number().min(0.1).max(86_400).default(600),
  /** A member's reply the visitor has not seen this long is emailed to the address they gave. */
  HANDOFF_REPLY_EMAIL_AFTER_SECONDS: z.coerce.number().min(0.1).max(86_400).default(120),
  /** Deleting an account (docs/contracts.md §18): rows per DELETE statement, so no statement holds locks long. */
  ACCOUNT_DELETION_BATCH: z.coerce.number().int().min(1).max(100_000).default(1000),
  /** How long the instance carrying on a deletion holds it; a deletion left longer (its instance died) is taken over. */
  ACCOUNT_DELETION_LEASE_SECONDS: z.coerce.number().min(1).max(3600).default(60),
  /** How often every instance's sweep looks for a deletion nobody carries on. */
  ACCOUNT_DELETION_SWEEP_SECONDS: z.coerce.number().min(0.1).max(3600).default(60),
  /** Answer tests (docs/contracts.md §20): a knowledge-base change is followed by a run once edits pause this long… */
  ANSWER_TESTS_DEBOUNCE_SECONDS: z.coerce.number().min(0).max(3600).default(10),
  /** …or at the latest this long after the first unrun change, however many edits follow. */
  ANSWER_TESTS_MAX_WAIT_SECONDS: z.coerce.number().min(0).max(3600).default(45),
  /** How often each instance looks for accounts whose tests are due. */
  ANSWER_TESTS_POLL_SECONDS: z.coerce.number().min(0.1).max(3600).default(5),
  /** Test runs one process runs at once (each account one at a time, across instances). */
  ANSWER_TESTS_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(1),
  /** How often each instance looks for conversations past their account's retention (docs/contracts.md §18); a changed setting wakes it at once. */
  RETENTION_INTERVAL_SECONDS: z.coerce.number().min(0.1).max(86_400).default(3600),
});

export type Env = z.infer<typeof EnvSchema>;

let cached: Env | undefined;

export function getEnv(): Env {
  if (cached) return cached;
  const raw: Record<string, string | undefined> = {};
  for (const key of Object.keys(EnvSchema.shape)) {
    const value = process.env[key];
    raw[key] = value === '' ? undefined : value;
  }
  const parsed = EnvSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(`Invalid environment: ${describeIssues(issueParams(parsed.error, { path: 'full', fallback: 'environment' }))}`);
  }
  cached = parsed.data;
  return cached;
}

/**
 * next-auth reads NEXTAUTH_SECRET and NEXTAUTH_URL from process.env itself, so the values the
 * server provides when the operator set none (lib/auth/session-secret.ts) are handed over here.
 */
export function provideNextAuthEnv(values: { secret?: string; url?: string }): void {
  if (values.secret) process.env.NEXTAUTH_SECRET = values.secret;
  if (values.url) process.env.NEXTAUTH_URL = values.url;
}

/** The session secret in force: the operator's, or the one provided at start. */
export function nextAuthSecret(): string | undefined {
  return process.env.NEXTAUTH_SECRET;
}

/** The dashboard's public address in force: the operator's, or the one provided at start. */
export function nextAuthUrl(): string | undefined {
  return process.env.NEXTAUTH_URL;
}
