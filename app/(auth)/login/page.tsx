import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { safeCallbackPath } from '@/lib/auth/redirects';
import { getDashboardSession } from '@/lib/auth/session';
import { LoginForm } from './LoginForm';

export const metadata = { title: 'Sign in · svc' };
export const dynamic = 'force-dynamic';

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string }> }) {
  if (await getDashboardSession()) redirect('/');
  const { callbackUrl } = await searchParams;
  const safe = safeCallbackPath(callbackUrl, (await headers()).get('host'));
  return (
    <main className="login-wrap">
      <div className="panel login">
        <h1>Sign in to svc</h1>
        <LoginForm callbackUrl={safe} />
      </div>
    </main>
  );
}
