import { can } from '@/lib/auth/roles';
import { requirePageMember } from '@/lib/auth/session';
import { getAccountName } from '@/lib/dashboard/service';
import { retentionPage } from '@/lib/privacy/retention';
import { DeleteAccountSection } from './DeleteAccountSection';
import { RetentionForm, VisitorData } from './PrivacyForms';

export const metadata = { title: 'Privacy · svc' };

export default async function PrivacyPage() {
  const member = await requirePageMember('privacy.manage');
  const { days } = await retentionPage(member);
  const accountName = can(member.role, 'account.delete') ? await getAccountName(member.accountId) : null;
  return (
    <>
      <h1>Privacy</h1>
      <p className="muted">
        How long conversations are kept, and a visitor&rsquo;s right to have their data erased or exported. Insights keep their figures for past days when
        conversations are deleted; the texts go. See &ldquo;Privacy and retention&rdquo; in the README for what each deletion removes.
      </p>
      <section className="panel" aria-labelledby="retention-heading">
        <h2 id="retention-heading" style={{ marginTop: 0 }}>
          Retention
        </h2>
        <RetentionForm initialDays={days} />
      </section>
      <section className="panel" aria-labelledby="visitor-heading">
        <h2 id="visitor-heading" style={{ marginTop: 0 }}>
          A visitor&rsquo;s data
        </h2>
        <VisitorData />
      </section>
      {accountName !== null && <DeleteAccountSection accountName={accountName} />}
    </>
  );
}
