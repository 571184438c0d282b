import type { MailInput } from '../../db/queries/mails';

/** The mails svc sends: each a plain-text part and a simple HTML part, from the same words. */

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

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
  return mail(
    to,
    `You are invited to ${v.accountName} on svc`,
    [
      `${v.inviter} invited you to join ${v.accountName} on svc as ${v.role === 'agent' ? 'an agent' : `an ${v.role}`}.`,
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

export function signupMail(to: string, v: { accountName: string; url: string }): MailInput {
  return mail(to, 'Confirm your svc account', [`Confirm the svc account ${v.accountName} within 24 hours:`], { url: v.url, label: 'Confirm account' }, [
    'If you did not sign up, ignore this email: nothing is created.',
  ]);
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
    `Waiting for a person: ${v.title}`,
    [
      `A visitor of ${v.accountName} has waited ${waited} for a person and nobody has taken the conversation yet.`,
      ...v.asked.map((q, i) => `${i === 0 ? 'Asked' : 'Lately asked'}: ${q}`),
      ...(last ? [last.declined ? 'The assistant declined: nothing in the knowledge base answered it.' : `The assistant answered: ${last.answer}`] : []),
      ...(v.sources.length > 0 ? [`Sources it used: ${v.sources.join(', ')}`] : []),
    ],
    { url: v.url, label: 'Open the conversation' },
    ['You get this email because "Email me when a conversation waits" is on in your profile.'],
  );
}

/** To the visitor: the replies their widget has not shown (they left their address while the team was away). */
export function unseenRepliesMail(to: string, v: { accountName: string; replies: Array<{ name: string; text: string }> }): MailInput {
  return mail(
    to,
    `${v.accountName} replied to your question`,
    [
      `You asked ${v.accountName} for a person and left this address. ${v.replies.length === 1 ? 'Their reply' : 'Their replies'}:`,
      ...v.replies.map((r) => `${r.name}: ${r.text}`),
    ],
    null,
    ['To answer, go back to the chat on their website.'],
  );
}
