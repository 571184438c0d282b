import { requirePageMember } from '@/lib/auth/session';
import { getProfile } from '@/lib/team/profile';
import { NameForm, NotificationsForm, PasswordForm, TwoFactorPanel } from './ProfileForms';

export const metadata = { title: 'Profile · svc' };

export default async function ProfilePage() {
  const session = await requirePageMember('records.read', { twoFactorSetup: true });
  const profile = await getProfile(session);
  return (
    <>
      <h1>Profile</h1>
      {session.mustSetUpTwoFactor && (
        <p className="error" role="alert">
          This account requires two-factor authentication: set it up below to open the other pages.
        </p>
      )}
      <p className="muted">
        {profile.email} · {profile.role}
      </p>
      <NameForm name={profile.name} />
      <PasswordForm />
      <TwoFactorPanel on={profile.twoFactor} codesLeft={profile.recoveryCodesLeft} />
      <NotificationsForm notifyEmail={profile.notifyEmail} />
    </>
  );
}
