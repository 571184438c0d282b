import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { safeCallbackPath } from '@/lib/auth/redirects';
import { getDashboardSession } from '@/lib/auth/session';
import { LoginForm } from './LoginForm';

export const metadata = { title: 'Sign in · svc' };
export const dynamic = 'force-dynamic';

/** What a page that signed the member out tells them here (`?notice=`). */
const NOTICES: Record<string, string> = {
  'account-deleted': 'The account was deleted and you are signed out. Its data is being removed.',
};

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string; notice?: string }> }) {
  if (await getDashboardSession()) redirect('/');
  const { callbackUrl, notice } = await searchParams;
  const shown = notice ? NOTICES[notice] : undefined;
  const safe = safeCallbackPath(callbackUrl, (await headers()).get('host'));
  return (
    <main className="login-wrap">
      <div className="panel login">
        <h1>Sign in to svc</h1>
        {shown && (
          <p className="success" role="status">
            {shown}
          </p>
        )}
        <LoginForm callbackUrl={safe} />
      </div>
    </main>
  );
}
