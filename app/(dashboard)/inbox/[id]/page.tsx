import { notFound } from 'next/navigation';
import { requirePageMember } from '@/lib/auth/session';
import { inboxConversationPage } from '@/lib/inbox/requests';
import { Conversation } from '../_components/Conversation';

export const metadata = { title: 'Conversation · Inbox · svc' };

/** One conversation for a member: summary, transcript, reply box and the handoff actions, live. */
export default async function InboxConversationPage({ params }: { params: Promise<{ id: string }> }) {
  const member = await requirePageMember('records.read');
  const page = await inboxConversationPage(member, (await params).id);
  if (!page) notFound();
  const { conversation: c, summary } = page;
  return (
    <>
      <p>
        <a href="/inbox">← Inbox</a>
      </p>
      <h1>{c.title || '(untitled)'}</h1>
      <section className="panel" aria-label="Summary">
        <h2>Summary</h2>
        <dl className="summary">
          <dt>Asked</dt>
          <dd>{summary.asked || '—'}</dd>
          <dt>{summary.declined ? 'Declined' : 'Answered'}</dt>
          <dd>{summary.answered || '—'}</dd>
          {summary.sources.length > 0 && (
            <>
              <dt>Sources</dt>
              <dd>{summary.sources.join(', ')}</dd>
            </>
          )}
        </dl>
      </section>
      <Conversation page={page} me={{ userId: member.userId, name: member.name || member.email.split('@')[0]! }} />
    </>
  );
}
