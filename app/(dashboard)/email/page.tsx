import { requirePageMember } from '@/lib/auth/session';
import { emailPage } from '@/lib/email/settings';
import { EmailSettingsForm, RegenerateAddress, SendTestEmail } from './EmailForms';

export const metadata = { title: 'Email · svc' };

export default async function EmailPage() {
  const member = await requirePageMember('email.manage');
  const { address, listening, settings, lastTest } = await emailPage(member);
  return (
    <>
      <h1>Email</h1>
      <p className="muted">
        Customers who write to your support address get the same answers and the same team as in the widget: each mail becomes a conversation of the{' '}
        <strong>Email</strong> channel in the <a href="/inbox">inbox</a>.
      </p>
      <section className="panel" aria-labelledby="address-heading">
        <h2 id="address-heading" style={{ marginTop: 0 }}>
          Your inbound address
        </h2>
        <p>
          <code style={{ fontSize: '1.05rem', wordBreak: 'break-all' }}>{address}</code>
        </p>
        {!listening && (
          <p className="error" role="status">
            This server does not take mail yet: its operator sets <code>INBOUND_SMTP_PORT</code> (README, Configuration).
          </p>
        )}
        <p className="muted">
          Forward your support address (for example support@yourshop.com) to this address: in Google Workspace or Gmail under Settings → Forwarding, in
          Microsoft 365 with a forwarding rule on the mailbox, or at your mail host. Keep it private: whoever knows it can open conversations.
        </p>
        <RegenerateAddress />
      </section>
      <section className="panel" aria-labelledby="test-heading">
        <h2 id="test-heading" style={{ marginTop: 0 }}>
          Test
        </h2>
        <p className="muted">
          Sends one mail through this server's listener to your inbound address and shows it arrive. It starts no conversation and is never answered.
        </p>
        <SendTestEmail listening={listening} lastTest={lastTest} />
      </section>
      <section className="panel" aria-labelledby="answers-heading">
        <h2 id="answers-heading" style={{ marginTop: 0 }}>
          Answers
        </h2>
        <EmailSettingsForm initial={settings} />
      </section>
    </>
  );
}
