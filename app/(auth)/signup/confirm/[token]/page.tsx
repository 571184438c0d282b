import { notFound } from 'next/navigation';
import { getEnv } from '@/lib/env';
import { ConfirmButton } from './ConfirmButton';

export const metadata = { title: 'Confirm your account · svc' };
export const dynamic = 'force-dynamic';

/** A button, not a GET: mail scanners that open links must not use the single-use token. */
export default async function ConfirmSignupPage({ params }: { params: Promise<{ token: string }> }) {
  if (getEnv().SIGNUP !== 'open') notFound();
  const { token } = await params;
  return (
    <main className="login-wrap">
      <div className="panel login">
        <h1>Confirm your account</h1>
        <ConfirmButton token={token} />
      </div>
    </main>
  );
}
