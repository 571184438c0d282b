import { requirePageMember } from '@/lib/auth/session';
import { inboxPage } from '@/lib/inbox/requests';
import { VIEW_LABELS } from '@/lib/inbox/protocol';
import { Availability } from './_components/Availability';
import { InboxList } from './_components/InboxList';

export const metadata = { title: 'Inbox · svc' };

/** The members' inbox: views with counts, live through the `/inbox` namespace. */
export default async function InboxPage({ searchParams }: { searchParams: Promise<{ view?: string | string[] }> }) {
  const member = await requirePageMember('records.read');
  const asked = (await searchParams).view;
  const view = VIEW_LABELS.find(([v]) => v === asked)?.[0] ?? 'waiting';
  const { list, availability } = await inboxPage(member, view);
  return (
    <>
      <div className="chart-head">
        <h1>Inbox</h1>
        <Availability initial={availability} />
      </div>
      <InboxList initial={list} memberId={member.userId} />
      <p>
        <a href="/inbox/replies">Canned replies</a>
      </p>
    </>
  );
}
