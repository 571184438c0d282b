import type { MailInput } from '../../db/queries/mails';

/** The mails svc sends: each a plain-text part and a simple HTML part, from the same words. */

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Links in text that others wrote (account and member names, titles, visitors' words): mails must not carry them. */
const LINKISH = /\b(?:[a-z][a-z0-9+.-]*:\/\/|www\.)\S*|\b[\w-]+(?:\.[\w-]+)+\/\S*/gi;

/**
 * Text someone else chose, as one line of at most `max` characters without links: svc's mails are
 * not a relay for arbitrary text (HTML is escaped by `mail` below).
 */
export function quoted(s: string, max: number): string {
  // LINKISH tries a match at every word start, so it only ever sees a bounded prefix.
  const bound = max * 4 + 64;
  const cut = s.length > bound;
  const line = (cut ? s.slice(0, bound) : s)
    .replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, ' ')
    .replace(LINKISH, '[link removed]')
    .replace(/\s+/g, ' ')
    .trim();
  if (line.length > max) return `${line.slice(0, max - 1).trimEnd()}…`;
  return cut ? `${line}…` : line;
}
const NAME = 60;
const TITLE = 120;
const WORDS = 1000;

function mail(to: string, subject: string, lines: string[], link: { url: string; label: string } | null, after: string[]): MailInput {
  const text = [...lines, ...(link ? ['', link.url] : []), '', ...after].join('\n');
  const para = (l: string) => `<p>${escapeHtml(l)}</p>`;
  const button = link
    ? `<p><a href="${escapeHtml(link.url)}" style="display:inline-block;padding:.5em 1em;background:#2563eb;color:#fff;border-radius:6px;text-decoration:none">${escapeHtml(link.label)}</a></p>` +
      `<p style="font-size:.85em;color:#6b7280">${escapeHtml(link.url)}</p>`
    : '';
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5;color:#1f2937">${lines.map(para).join('')}${button}${after.map(para).join('')}</body></html>`;
  return { to, subject, text, html };
}

export function invitationMail(to: string, v: { accountName: string; inviter: string; role: string; url: string }): MailInput {
  const account = quoted(v.accountName, NAME);
  return mail(
    to,
    `You are invited to ${account} on svc`,
    [
      `${quoted(v.inviter, NAME)} invited you to join ${account} on svc as ${v.role === 'agent' ? 'an agent' : `an ${v.role}`}.`,
      'Accept the invitation within 7 days:',
    ],
    { url: v.url, label: 'Accept invitation' },
    ['If you did not expect this invitation, ignore this email.'],
  );
}

export function passwordResetMail(to: string, v: { url: string }): MailInput {
  return mail(
    to,
    'Reset your svc password',
    ['Someone asked to reset the password of your svc account. Choose a new password within 1 hour:'],
    { url: v.url, label: 'Choose a new password' },
    ['If it was not you, ignore this email: your password stays as it is.'],
  );
}

/** To an address that already has a user, instead of a confirmation (the sign-up form answers the same either way). */
export function signupTakenMail(to: string, v: { url: string }): MailInput {
  return mail(
    to,
    'Your svc account',
    ['Someone tried to sign up for svc with this address, which already has an account. To get in, sign in or choose a new password:'],
    { url: v.url, label: 'Sign in' },
    ['If it was not you, ignore this email: nothing changed.'],
  );
}

export function signupMail(to: string, v: { accountName: string; url: string }): MailInput {
  return mail(
    to,
    'Confirm your svc account',
    [`Confirm the svc account ${quoted(v.accountName, NAME)} within 24 hours:`],
    { url: v.url, label: 'Confirm account' },
    ['If you did not sign up, ignore this email: nothing is created.'],
  );
}

/** To members: a conversation has waited for a person (docs/contracts.md §14 "notifications"). */
export function waitingConversationMail(
  to: string,
  v: {
    accountName: string;
    title: string;
    minutes: number;
    asked: string[];
    answers: Array<{ answer: string; declined: boolean }>;
    sources: string[];
    url: string;
  },
): MailInput {
  const waited = v.minutes < 1 ? 'less than a minute' : v.minutes === 1 ? '1 minute' : `${v.minutes} minutes`;
  const last = v.answers.at(-1);
  return mail(
    to,
    `Waiting for a person: ${quoted(v.title, TITLE)}`,
    [
      `A visitor of ${quoted(v.accountName, NAME)} has waited ${waited} for a person and nobody has taken the conversation yet.`,
      ...v.asked.map((q, i) => `${i === 0 ? 'Asked' : 'Lately asked'}: ${quoted(q, WORDS)}`),
      ...(last
        ? [last.declined ? 'The assistant declined: nothing in the knowledge base answered it.' : `The assistant answered: ${quoted(last.answer, WORDS)}`]
        : []),
      ...(v.sources.length > 0 ? [`Sources it used: ${v.sources.map((x) => quoted(x, TITLE)).join(', ')}`] : []),
    ],
    { url: v.url, label: 'Open the conversation' },
    ['You get this email because "Email me when a conversation waits" is on in your profile.'],
  );
}

/** To the visitor: the replies their widget has not shown (they left their address while the team was away). */
export function unseenRepliesMail(to: string, v: { accountName: string; replies: Array<{ name: string; text: string }>; answerable?: boolean }): MailInput {
  const account = quoted(v.accountName, NAME);
  return mail(
    to,
    `${account} replied to your question`,
    [
      `You asked ${account} for a person and left this address. ${v.replies.length === 1 ? 'Their reply' : 'Their replies'}:`,
      // A member's own words to the visitor who asked (links included), only bounded in length.
      ...v.replies.map((r) => `${quoted(r.name, NAME)}: ${r.text.length > 4 * WORDS ? `${r.text.slice(0, 4 * WORDS - 1)}…` : r.text}`),
    ],
    null,
    [v.answerable ? 'To answer, reply to this email or go back to the chat on their website.' : 'To answer, go back to the chat on their website.'],
  );
}

/** To a member: the conversations that began waiting since their last waiting mail (one mail a window, not one per conversation). */
export function waitingDigestMail(
  to: string,
  v: { accountName: string; total: number; conversations: Array<{ title: string; minutes: number; url: string }>; url: string },
): MailInput {
  const more = v.total - v.conversations.length;
  return mail(
    to,
    `${v.total} conversations waiting for a person`,
    [
      `${v.total} conversations of ${quoted(v.accountName, NAME)} began waiting for a person since your last email and nobody has taken them yet:`,
      ...v.conversations.map((c) => `${quoted(c.title, TITLE)} (waiting ${c.minutes < 1 ? 'less than a minute' : `${c.minutes} min`}): ${c.url}`),
      ...(more > 0 ? [`and ${more} more.`] : []),
    ],
    { url: v.url, label: 'Open the inbox' },
    ['You get at most one such email every few minutes because "Email me when a conversation waits" is on in your profile.'],
  );
}

/** To a visitor who wrote by mail: the AI's answer in their thread (docs/contracts.md §17), its sources and that a reply reaches the team. */
export function emailAnswerMail(to: string, v: { accountName: string; subject: string; answer: string; sources: string[] }): Omit<MailInput, 'thread'> {
  const account = quoted(v.accountName, NAME);
  return mail(
    to,
    replySubject(v.subject, account),
    // The answer is the account's own knowledge base quoted by its assistant: kept as written, bounded.
    [
      ...plainText(v.answer.length > 4 * WORDS ? `${v.answer.slice(0, 4 * WORDS - 1)}…` : v.answer).split('\n'),
      ...(v.sources.length > 0 ? ['', `Sources: ${v.sources.map((x) => quoted(x, TITLE)).join(', ')}`] : []),
    ],
    null,
    [`This reply was written automatically by the assistant of ${account}. Answer this email to reach the team.`],
  );
}

/** To a customer whose mail waits for a person ("Acknowledge new emails", docs/contracts.md §17): the team got it and answers by mail. */
export function emailAcknowledgementMail(to: string, v: { accountName: string; subject: string }): Omit<MailInput, 'thread'> {
  const account = quoted(v.accountName, NAME);
  return mail(
    to,
    replySubject(v.subject, account),
    [`Thank you for your message. The team of ${account} has received it and will answer you by email.`],
    null,
    ['This reply was sent automatically. Answer this email to add to your message.'],
  );
}

/** `Re: <subject>` (once), the subject bounded and on one line. */
const replySubject = (subject: string, account: string) =>
  quoted(/^re:/i.test(subject.trim()) ? subject.trim() : `Re: ${subject.trim() || `your message to ${account}`}`, 200);

/** To a customer who wrote by mail: a member's reply in their thread (docs/contracts.md §17 "members"), the member's words as typed. */
export function memberReplyMail(to: string, v: { accountName: string; subject: string; text: string }): Omit<MailInput, 'thread'> {
  return mail(to, replySubject(v.subject, quoted(v.accountName, NAME)), v.text.split('\n'), null, []);
}

/** An answer's Markdown emphasis as plain words (`**Returns**` → `Returns`); quotes and lists read well as they are. */
const plainText = (markdown: string) =>
  markdown.replace(/\*\*([^*\n]{1,500})\*\*|__([^_\n]{1,500})__/g, (_m, a: string | undefined, b: string | undefined) => a ?? b ?? '');
