import { z } from 'zod';
import { getDb, type Db } from '../../db/client';
import { getAdminUserByEmail } from '../../db/queries/accounts';
import { revokeSessionsOfUser } from '../../db/queries/admin-sessions';
import { consumeEmailToken, insertEmailToken, peekEmailToken, setPasswordHash } from '../../db/queries/team';
import { Email, Password } from '../accounts/contract';
import { validate } from '../accounts/service';
import { AppError } from '../core/errors';
import { getLimiter } from '../limits/limiter';
import { passwordResetMail } from '../mail/templates';
import { writeBoundedMail } from '../mail/outbox';
import { addressLimitKey } from '../net/client-address';
import { limitPasswordForm } from './form-limits';
import { hashLinkToken, LINK_TOKEN_RE, newLinkToken } from '../auth/email-tokens';
import { hashPassword } from '../auth/passwords';
import { sessionsOfUserChanged } from '../auth/session-events';
import { dashboardUrl } from '../auth/session-secret';

/**
 * Password reset (docs/contracts.md §13): a single-use link valid 1 hour. The answer is the same whether
 * or not the address has a user, and whether or not a limit stopped the mail: at most
 * MAILS_PER_ADDRESS_PER_HOUR mails go to one address (counted in the outbox, so every instance
 * agrees), and a client address may ask RESET_REQUESTS_PER_ADDRESS times an hour.
 */
export const RESET_LINK_MINUTES = 60;
const RESET_REQUESTS_PER_ADDRESS = 30;
export const RESET_ANSWER = 'If an account uses that email, we have sent it a link to choose a new password. The link is valid for 1 hour.';

export async function requestPasswordReset(input: { email: unknown }, ip: string): Promise<{ message: string }> {
  const { email } = validate(z.object({ email: Email }), input);
  const answer = { message: RESET_ANSWER };
  const limiter = getLimiter('reset:address', { points: RESET_REQUESTS_PER_ADDRESS, durationSeconds: 3600 });
  if (!(await limiter.consume(addressLimitKey(ip))).allowed) return answer;
  const user = await getAdminUserByEmail(await getDb(), email);
  if (!user) return answer;
  const { token, hash } = newLinkToken();
  await writeBoundedMail(user.accountId, passwordResetMail(email, { url: dashboardUrl(`/reset-password/${token}`) }), (tx) =>
    insertEmailToken(tx, { tokenHash: hash, kind: 'reset', userId: user.id, expiresAt: new Date(Date.now() + RESET_LINK_MINUTES * 60_000) }),
  );
  return answer;
}

export async function isResetLinkValid(token: string): Promise<boolean> {
  return LINK_TOKEN_RE.test(token) && peekEmailToken(await getDb(), hashLinkToken(token), 'reset');
}

/** Sets the new password once per link and ends every session and every other reset link of that user. */
export async function resetPassword(token: string, input: { password: unknown }, ip: string) {
  await limitPasswordForm(ip);
  const { password } = validate(z.object({ password: Password }), input);
  const gone = new AppError('not_found', 'This reset link is not valid any more (used or expired); ask for a new one.');
  // The token first: a forged or used link never costs a hash.
  if (!LINK_TOKEN_RE.test(token)) throw gone;
  const db = await getDb();
  if (!(await peekEmailToken(db, hashLinkToken(token), 'reset'))) throw gone;
  const passwordHash = await hashPassword(password);
  const done = await db.transaction(async (tx) => {
    const t = tx as unknown as Db;
    const row = await consumeEmailToken(t, hashLinkToken(token), 'reset');
    if (!row?.userId) throw gone;
    await setPasswordHash(t, row.userId, passwordHash);
    return { user_id: row.userId, sessions_revoked: await revokeSessionsOfUser(t, row.userId) };
  });
  await sessionsOfUserChanged(done.user_id);
  return done;
}
