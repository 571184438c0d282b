import { ForgotForm } from './ForgotForm';

export const metadata = { title: 'Forgot password · svc' };

export default function ForgotPasswordPage() {
  return (
    <main className="login-wrap">
      <div className="panel login">
        <h1>Forgot your password?</h1>
        <p className="muted">Enter the email you sign in with; we send it a link to choose a new password.</p>
        <ForgotForm />
        <p style={{ marginBottom: 0 }}>
          <a href="/login">Back to sign in</a>
        </p>
      </div>
    </main>
  );
}
