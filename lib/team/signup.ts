import { z } from 'zod';
import { getDb, type Db } from '../../db/client';
import { getAdminUserByEmail } from '../../db/queries/accounts';
import { consumeEmailToken, insertEmailToken } from '../../db/queries/team';
import { AccountName, Email, Password } from '../accounts/contract';
import { createAccountWithOwner, validate } from '../accounts/service';
import { AppError } from '../core/errors';
import { hashLinkToken, LINK_TOKEN_RE, newLinkToken, signTicket } from '../auth/email-tokens';
import { NO_ACCOUNT, writeBoundedMail } from '../mail/outbox';
import { hashPassword } from '../auth/passwords';
import { dashboardUrl } from '../auth/session-secret';
import { getEnv } from '../env';
import { signupMail, signupTakenMail } from '../mail/templates';
import { limitPasswordForm } from './form-limits';

/**
 * Sign-up (docs/contracts.md §13, SIGNUP=open): nothing is created until the emailed link (valid 24 h)
 * is opened; then the account and its owner are created and the owner is signed in. The answer
 * is the same whether or not the address already has a user (who gets a 'you already have an account' mail).
 */
export const SIGNUP_HOURS = 24;
export const SIGNUP_ANSWER = 'Check your email: we sent a link to confirm your account. It is valid for 24 hours.';
const SignupInput = z.object({ accountName: AccountName, email: Email, password: Password });
type Pending = { name: string; email: string; passwordHash: string };

export function requireSignupOpen(): void {
  if (getEnv().SIGNUP !== 'open') throw new AppError('not_found', 'Sign-up is closed on this service.');
}

export async function requestSignup(input: { accountName: unknown; email: unknown; password: unknown }, ip: string) {
  requireSignupOpen();
  await limitPasswordForm(ip);
  const v = validate(SignupInput, input);
  // The same work for a taken address (a hash and a bounded mail), so neither the answer nor its time tells.
  const payload: Pending = { name: v.accountName, email: v.email, passwordHash: await hashPassword(v.password) };
  if (await getAdminUserByEmail(await getDb(), v.email)) {
    await writeBoundedMail(NO_ACCOUNT, signupTakenMail(v.email, { url: dashboardUrl('/login') }), async () => {});
    return { message: SIGNUP_ANSWER };
  }
  const { token, hash } = newLinkToken();
  await writeBoundedMail(NO_ACCOUNT, signupMail(v.email, { accountName: v.accountName, url: dashboardUrl(`/signup/confirm/${token}`) }), (tx) =>
    insertEmailToken(tx, { tokenHash: hash, kind: 'signup', payload, expiresAt: new Date(Date.now() + SIGNUP_HOURS * 3_600_000) }),
  );
  return { message: SIGNUP_ANSWER };
}

/** Creates the account once per link and returns a sign-in ticket for its owner. */
export async function confirmSignup(token: string) {
  requireSignupOpen();
  const gone = () => new AppError('not_found', 'This confirmation link is not valid any more (used or expired); sign up again.');
  if (!LINK_TOKEN_RE.test(token)) throw gone();
  const db = await getDb();
  const row = await consumeEmailToken(db as Db, hashLinkToken(token), 'signup');
  if (!row?.payload) throw gone();
  const p = row.payload as Pending;
  const created = await createAccountWithOwner(db, { name: p.name, email: p.email, passwordHash: p.passwordHash });
  return { account_id: created.account_id, ticket: signTicket(created.user_id, 'sign_in', 120) };
}
