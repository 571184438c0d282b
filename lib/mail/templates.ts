import type { MailInput } from '../../db/queries/mails';

/** The mails svc sends: each a plain-text part and a simple HTML part, from the same words. */

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function mail(to: string, subject: string, lines: string[], link: { url: string; label: string }, after: string[]): MailInput {
  const text = [...lines, '', link.url, '', ...after].join('\n');
  const para = (l: string) => `<p>${escapeHtml(l)}</p>`;
  const html =
    `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5;color:#1f2937">${lines.map(para).join('')}` +
    `<p><a href="${escapeHtml(link.url)}" style="display:inline-block;padding:.5em 1em;background:#2563eb;color:#fff;border-radius:6px;text-decoration:none">${escapeHtml(link.label)}</a></p>` +
    `<p style="font-size:.85em;color:#6b7280">${escapeHtml(link.url)}</p>${after.map(para).join('')}</body></html>`;
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
