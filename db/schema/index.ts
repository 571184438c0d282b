import { sql } from 'drizzle-orm';
import {
  customType, index, integer, pgTable, serial, text, timestamp, uniqueIndex, uuid,
} from 'drizzle-orm/pg-core';

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => 'bytea' });
const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/** One customer. The two counters are kept exact by every writer (see db/queries/counters.ts). */
export const accounts = pgTable('accounts', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
  conversationCount: integer('conversation_count').notNull().default(0),
  responseCount: integer('response_count').notNull().default(0),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const adminUsers = pgTable('admin_users', {
  id: serial('id').primaryKey(),
  accountId: integer('account_id').notNull().references(() => accounts.id),
  email: text('email').notNull(),
  passwordHash: text('password_hash').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('admin_users_email_idx').on(t.email)]);

export const apiKeys = pgTable('api_keys', {
  keyId: text('key_id').primaryKey(),
  accountId: integer('account_id').notNull().references(() => accounts.id),
  name: text('name').notNull(),
  env: text('env').notNull(),
  secretHash: bytea('secret_hash').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
  lastUsedAt: ts('last_used_at'),
  revokedAt: ts('revoked_at'),
}, (t) => [index('api_keys_account_idx').on(t.accountId)]);

/** Channel ids are unique across the service (imports bring their own ids). */
export const channels = pgTable('channels', {
  id: integer('id').primaryKey().generatedByDefaultAsIdentity({ startWith: 1000000 }),
  accountId: integer('account_id').notNull().references(() => accounts.id),
  name: text('name').notNull(),
  conversationCount: integer('conversation_count').notNull().default(0),
  responseCount: integer('response_count').notNull().default(0),
}, (t) => [index('channels_account_idx').on(t.accountId)]);

export const conversations = pgTable('conversations', {
  id: uuid('id').primaryKey(),
  accountId: integer('account_id').notNull().references(() => accounts.id),
  channelId: integer('channel_id').notNull().references(() => channels.id),
  title: text('title').notNull(),
  status: text('status').notNull().default('Open'),
  responseCount: integer('response_count').notNull().default(0),
  createdAt: ts('created_at').notNull(),
  updatedAt: ts('updated_at').notNull(),
}, (t) => [
  index('conversations_account_created_idx').on(t.accountId, t.createdAt, t.id),
  index('conversations_account_updated_idx').on(t.accountId, t.updatedAt, t.id),
  index('conversations_account_count_idx').on(t.accountId, t.responseCount, t.id),
  index('conversations_account_channel_idx').on(t.accountId, t.channelId, t.id),
  index('conversations_account_id_idx').on(t.accountId, t.id),
  index('conversations_channel_created_idx').on(t.channelId, t.createdAt, t.id),
  index('conversations_title_trgm_idx').using('gin', sql`${t.title} gin_trgm_ops`),
]);

/**
 * One answered (or failed) question. A response is also the pair of messages the transcript
 * shows: the user message (question) and the assistant message (answer), whose ids live here.
 */
export const responses = pgTable('responses', {
  id: uuid('id').primaryKey(),
  accountId: integer('account_id').notNull().references(() => accounts.id),
  conversationId: uuid('conversation_id').notNull().references(() => conversations.id),
  channelId: integer('channel_id').notNull().references(() => channels.id),
  question: text('question').notNull(),
  answer: text('answer').notNull(),
  likes: integer('likes').notNull().default(0),
  dislikes: integer('dislikes').notNull().default(0),
  comments: integer('comments').notNull().default(0),
  createdAt: ts('created_at').notNull(),
  questionMessageId: uuid('question_message_id').notNull().default(sql`gen_random_uuid()`),
  answerMessageId: uuid('answer_message_id').notNull().default(sql`gen_random_uuid()`),
  error: text('error'),
}, (t) => [
  index('responses_account_created_idx').on(t.accountId, t.createdAt, t.id),
  index('responses_account_id_idx').on(t.accountId, t.id),
  index('responses_account_likes_idx').on(t.accountId, t.likes, t.id),
  index('responses_account_dislikes_idx').on(t.accountId, t.dislikes, t.id),
  index('responses_account_comments_idx').on(t.accountId, t.comments, t.id),
  index('responses_account_channel_idx').on(t.accountId, t.channelId, t.id),
  index('responses_account_conversation_idx').on(t.accountId, t.conversationId, t.id),
  index('responses_channel_created_idx').on(t.channelId, t.createdAt, t.id),
  index('responses_conversation_created_idx').on(t.conversationId, t.createdAt, t.id),
  index('responses_question_trgm_idx').using('gin', sql`${t.question} gin_trgm_ops`),
  index('responses_answer_trgm_idx').using('gin', sql`${t.answer} gin_trgm_ops`),
]);

/** Files attached to a message (uploads arrive with the widget service). */
export const attachments = pgTable('attachments', {
  id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
  accountId: integer('account_id').notNull().references(() => accounts.id),
  conversationId: uuid('conversation_id').references(() => conversations.id),
  messageId: uuid('message_id'),
  filename: text('filename').notNull(),
  contentType: text('content_type').notNull(),
  size: integer('size').notNull(),
  storageName: text('storage_name').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
}, (t) => [
  index('attachments_conversation_idx').on(t.conversationId),
  index('attachments_message_idx').on(t.messageId),
]);
