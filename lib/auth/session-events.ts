import { publishInvalidation } from '../cache/invalidation';

/**
 * Members' sessions changed (a sign-out, a new password, two-factor required): every instance's
 * live inbox sockets of that user or account re-check their session at once instead of at the
 * next event or minute. Ids: `user:<id>` or `account:<id>`.
 */
export const SESSIONS_TOPIC = 'member-sessions';

export function sessionsOfUserChanged(userId: number): Promise<void> {
  return publishInvalidation(SESSIONS_TOPIC, `user:${userId}`);
}

export function sessionsOfAccountChanged(accountId: number): Promise<void> {
  return publishInvalidation(SESSIONS_TOPIC, `account:${accountId}`);
}
