import { z } from 'zod';
import { getDb, type Db } from '../../db/client';
import { revokeSessionsOfUser } from '../../db/queries/admin-sessions';
import { getUserById, setMemberName, setPasswordHash, getTeamSettings } from '../../db/queries/team';
import { setMemberNotifyEmail } from '../../db/queries/handoff-mail';
import { MemberName, Password } from '../accounts/contract';
import { validate } from '../accounts/service';
import { AppError } from '../core/errors';
import { hashPassword, verifyPassword } from '../auth/passwords';
import { recoveryCodesLeft } from '../auth/two-factor';
import { sessionsOfUserChanged } from '../auth/session-events';

/** The signed-in member's own settings (/profile). */
export type Me = { userId: number; accountId: number; sessionId: string };

export async function getProfile(me: Me) {
  const db = await getDb();
  const user = await getUserById(db, me.userId);
  if (!user) throw new AppError('not_found', 'No such user.');
  return {
    name: user.name,
    email: user.email,
    role: user.role,
    twoFactor: !!user.totpEnabledAt,
    notifyEmail: user.notifyEmail,
    recoveryCodesLeft: user.totpEnabledAt ? await recoveryCodesLeft(me.userId) : 0,
    requireTwoFactor: (await getTeamSettings(db, me.accountId)).requireTwoFactor,
  };
}

export async function updateMyName(me: Me, input: { name: unknown }) {
  const { name } = validate(z.object({ name: MemberName }), input);
  await setMemberName(await getDb(), me.userId, name);
  return { name };
}

/** "Email me when a conversation waits" (docs/contracts.md §14 "notifications"). */
export async function setMyEmailNotifications(me: Me, input: { notify_email: unknown }) {
  const { notify_email } = validate(z.object({ notify_email: z.boolean({ error: 'must be true or false' }) }), input);
  if (!(await setMemberNotifyEmail(await getDb(), me.accountId, me.userId, notify_email))) throw new AppError('not_found', 'No such user.');
  return { notify_email };
}

/** Changes the member's password after checking the current one; every other session of theirs ends. */
export async function changeMyPassword(me: Me, input: { current: unknown; password: unknown }) {
  const v = validate(z.object({ current: z.string().max(1024), password: Password }), input);
  const db = await getDb();
  const user = await getUserById(db, me.userId);
  if (!user || !(await verifyPassword(v.current, user.passwordHash))) throw new AppError('invalid_request', 'The current password is not right.');
  const passwordHash = await hashPassword(v.password);
  const ended = await db.transaction(async (tx) => {
    await setPasswordHash(tx as unknown as Db, me.userId, passwordHash);
    return revokeSessionsOfUser(tx as unknown as Db, me.userId, me.sessionId);
  });
  await sessionsOfUserChanged(me.userId);
  return { other_sessions_ended: ended };
}
