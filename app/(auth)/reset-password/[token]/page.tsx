import { isResetLinkValid } from '@/lib/team/password-reset';
import { ResetForm } from './ResetForm';

export const metadata = { title: 'Choose a new password · svc' };
export const dynamic = 'force-dynamic';

export default async function ResetPasswordPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const valid = await isResetLinkValid(token);
  return (
    <main className="login-wrap">
      <div className="panel login">
        <h1>Choose a new password</h1>
        {valid ? (
          <ResetForm token={token} />
        ) : (
          <p className="error" role="alert">
            This reset link is not valid any more (used or expired). <a href="/forgot-password">Ask for a new one</a>.
          </p>
        )}
      </div>
    </main>
  );
}
