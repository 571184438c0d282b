/**
 * The inputs of the handoff service (lib/conversations/handoff.ts) as every door gives them (the
 * widget's socket, the inbox's socket and pages, the CLI): one zod schema each, messages a person
 * can act on. Outputs are typed in the service.
 */
import { z } from 'zod';
import type { Role } from '../auth/roles';
import { MAX_QUESTION_CHARS } from '../limits/text';
import { AppError } from '../core/errors';
import { processSingleton } from '../core/process';
import { uuidString } from '../core/validation';
import { INBOX_VIEWS } from '../../db/queries/inbox';

export const MAX_REPLY_CHARS = 10_000;
export const MAX_AWAY_TEXT_CHARS = 500;
export const MAX_RATING_COMMENT_CHARS = 2000;
export const MAX_CANNED_TEXT_CHARS = 5000;
/** A snooze lasts at most this long. */
export const MAX_SNOOZE_DAYS = 365;

const conversationId = uuidString('must be a conversation id (a UUID)');
const text = (max: number) =>
  z
    .string({ error: 'is required' })
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .refine((s) => !s.includes('\u0000'), 'must not contain NUL characters');

/**
 * The sender's id of one composed message (a visitor's `ask`, a member's reply or note): a retry
 * with the same id in the same conversation stores nothing new and is answered with the first message.
 */
export const ClientMessageId = z
  .string({ error: 'is required' })
  .min(1, 'is required')
  .max(100, 'must be at most 100 characters')
  .regex(/^[\w.:-]+$/, 'letters, digits, _ . : - only');

export const ConversationRef = z.object({ conversation_id: conversationId });
export const AssignInput = z.object({ conversation_id: conversationId, member_id: z.int({ error: 'must be a member id' }).positive('must be a member id') });
/** A member's reply or note; without `client_message_id` (older callers) a resend stores a second message. */
export const MemberTextInput = z.object({ conversation_id: conversationId, client_message_id: ClientMessageId.optional(), text: text(MAX_REPLY_CHARS) });
export const SnoozeInput = z.object({
  conversation_id: conversationId,
  until: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 time with a zone, e.g. 2026-12-01T09:00:00Z' }),
});
export const VisitorMessageInput = z.object({
  conversation_id: conversationId,
  client_message_id: ClientMessageId,
  text: text(MAX_QUESTION_CHARS),
});
export const RateInput = z.object({
  conversation_id: conversationId,
  rating: z.int({ error: 'must be a whole number from 1 to 5' }).min(1, 'must be from 1 to 5').max(5, 'must be from 1 to 5'),
  comment: z.string().trim().max(MAX_RATING_COMMENT_CHARS, `must be at most ${MAX_RATING_COMMENT_CHARS} characters`).nullish(),
});
export const VisitorEmailInput = z.object({ conversation_id: conversationId, email: z.email({ error: 'must be an email address' }).max(320) });
export const MarkSeenInput = z.object({ conversation_id: conversationId, message_ids: z.array(uuidString('must be message ids')).max(500).optional() });
export const Availability = z.enum(['online', 'away'], { error: 'must be online or away' });
export type Availability = z.infer<typeof Availability>;

const HHMM = /^(?:[01]\d|2[0-3]):[0-5]\d$|^24:00$/;
export const DayHours = z
  .object({
    open: z.boolean({ error: 'must be true or false' }),
    opens: z.string().regex(HHMM, 'must be a time HH:MM (00:00–24:00)'),
    closes: z.string().regex(HHMM, 'must be a time HH:MM (00:00–24:00)'),
  })
  .refine((d) => !d.open || d.opens < d.closes, { message: 'must close after it opens', path: ['closes'] });
export type DayHours = z.infer<typeof DayHours>;
export const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;

/** Per process (a cache of pure facts): zones found valid, so reading stored settings builds no formatter. */
const validZones = () => processSingleton('svc.handoffValidZones', () => new Set<string>());

/** A visitor's messages kept per conversation (questions to the AI and messages to the team); the next is refused (`limit_reached`), members still act on it. */
export const MAX_VISITOR_MESSAGES = 2_000;

/**
 * The one cap rule of a visitor's messages, whichever door and whoever answers: `held` counts the
 * conversation's questions to the AI and its messages stored for the team (`limit_reached` at the cap).
 */
export function refuseWhenVisitorMessagesFull(held: number): void {
  if (held >= MAX_VISITOR_MESSAGES)
    throw new AppError('limit_reached', `This conversation holds its ${MAX_VISITOR_MESSAGES} messages; start a new conversation to write more.`);
}

export function isTimeZone(tz: string): boolean {
  const known = validZones();
  if (known.has(tz)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    return false;
  }
  if (known.size < 1_000) known.add(tz);
  return true;
}

/** Handoff settings (docs/contracts.md §14 "office hours"); `hours` Monday first. */
export const HandoffSettings = z.object({
  enabled: z.boolean({ error: 'must be true or false' }),
  time_zone: z.string().trim().min(1, 'is required').max(100).refine(isTimeZone, 'must be an IANA time zone, e.g. Europe/Berlin'),
  hours: z.array(DayHours).length(7, 'must give the 7 weekdays, Monday first'),
  away_text: z.string().trim().max(MAX_AWAY_TEXT_CHARS, `must be at most ${MAX_AWAY_TEXT_CHARS} characters`),
});
export type HandoffSettings = z.infer<typeof HandoffSettings>;
export const DEFAULT_HANDOFF_SETTINGS: HandoffSettings = {
  enabled: true,
  time_zone: 'UTC',
  hours: WEEKDAYS.map(() => ({ open: true, opens: '00:00', closes: '24:00' })),
  away_text: '',
};

export const InboxListInput = z.object({
  view: z.enum(INBOX_VIEWS, { error: `must be one of ${INBOX_VIEWS.join(', ')}` }),
  cursor: z.string().max(200).nullish(),
  limit: z.int().min(1).max(100).optional(),
});

export const SHORTCUT_RE = /^[a-z0-9_-]{1,32}$/;
export const CannedReplyInput = z.object({
  shortcut: z.string({ error: 'is required' }).regex(SHORTCUT_RE, 'must be 1–32 of a–z, 0–9, _ and -'),
  text: text(MAX_CANNED_TEXT_CHARS),
});
export const CannedReplyId = z.object({ id: uuidString('must be a canned reply id (a UUID)') });

/** A signed-in member acting on the account's conversations (lib/team's Actor fits). */
export type Member = { accountId: number; userId: number; role: Role };
