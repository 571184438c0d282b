import { getLimiter } from '../limits/limiter';
import { addressLimitKey } from '../net/client-address';

/**
 * The forms that hash a new password (reset, invitation acceptance, sign-up), per client address:
 * a hash holds a thread-pool slot every sign-in needs, so one address may submit them
 * PASSWORD_FORMS_PER_ADDRESS times in 10 minutes (docs/decisions/team.md).
 */
export const PASSWORD_FORMS_PER_ADDRESS = 20;

export async function limitPasswordForm(ip: string): Promise<void> {
  await getLimiter('password-form:address', { points: PASSWORD_FORMS_PER_ADDRESS, durationSeconds: 600 }).enforce(
    addressLimitKey(ip),
    'password forms from this address',
  );
}
