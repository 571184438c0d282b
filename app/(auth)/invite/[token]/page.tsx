import { getInvitationByToken } from '@/lib/team/service';
import { AcceptForm } from './AcceptForm';

export const metadata = { title: 'Join a team · svc' };
export const dynamic = 'force-dynamic';

export default async function InvitePage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const invitation = await getInvitationByToken(token);
  return (
    <main className="login-wrap">
      <div className="panel login">
        {!invitation ? (
          <>
            <h1>Invitation not valid</h1>
            <p>This invitation link was already used, revoked or has expired. Ask the person who invited you for a new one.</p>
            <p>
              <a href="/login">Sign in</a>
            </p>
          </>
        ) : (
          <>
            <h1>Join {invitation.accountName}</h1>
            <p className="muted">
              You were invited as <strong>{invitation.role}</strong> with <strong>{invitation.email}</strong>. Choose your name and a password.
            </p>
            <AcceptForm token={token} />
          </>
        )}
      </div>
    </main>
  );
}
