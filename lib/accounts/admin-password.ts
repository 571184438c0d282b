import { z } from 'zod';
import { getDb } from '../../db/client';
import { setAdminPasswordAndRevokeSessions } from '../../db/queries/admin-sessions';
import { validate } from './service';
import { Email, Password } from './contract';
import { AppError } from '../core/errors';
import { hashPassword } from '../auth/passwords';
import { sessionsOfUserChanged } from '../auth/session-events';

const ChangePasswordInput = z.object({ email: Email, password: Password });

/** Sets an admin's password and ends every dashboard session, open inbox socket and reset link of that admin (CLI `user password`). */
export async function changeAdminPassword(input: { email: string; password: string }) {
  const v = validate(ChangePasswordInput, input);
  const user = await setAdminPasswordAndRevokeSessions(await getDb(), v.email, await hashPassword(v.password));
  if (!user) throw new AppError('not_found', `No admin user with the email ${v.email}.`);
  await sessionsOfUserChanged(user.id);
  return { user_id: user.id, account_id: user.accountId, email: user.email, sessions_revoked: user.sessionsRevoked };
}
