import { redirect } from 'next/navigation';
import { getDashboardSession } from '@/lib/auth/session';
import { LoginForm } from './LoginForm';

export const metadata = { title: 'Sign in · svc' };
export const dynamic = 'force-dynamic';

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string }> }) {
  if (await getDashboardSession()) redirect('/');
  const { callbackUrl } = await searchParams;
  const safe = callbackUrl && callbackUrl.startsWith('/') && !callbackUrl.startsWith('//') ? callbackUrl : '/';
  return (
    <main className="login-wrap">
      <div className="panel login">
        <h1>Sign in to svc</h1>
        <LoginForm callbackUrl={safe} />
      </div>
    </main>
  );
}
