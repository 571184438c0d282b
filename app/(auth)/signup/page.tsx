import { notFound } from 'next/navigation';
import { getEnv } from '@/lib/env';
import { SignupForm } from './SignupForm';

export const metadata = { title: 'Create an account · svc' };
export const dynamic = 'force-dynamic';

export default function SignupPage() {
  if (getEnv().SIGNUP !== 'open') notFound();
  return (
    <main className="login-wrap">
      <div className="panel login">
        <h1>Create your svc account</h1>
        <SignupForm />
        <p style={{ marginBottom: 0 }}>
          Already have an account? <a href="/login">Sign in</a>
        </p>
      </div>
    </main>
  );
}
