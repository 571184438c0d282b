import { requirePageMember } from '@/lib/auth/session';
import { listCannedReplies } from '@/lib/conversations/canned-replies';
import { CannedReplies } from '../_components/CannedReplies';

export const metadata = { title: 'Canned replies · Inbox · svc' };

/** The account's canned replies, typed as `/shortcut` in a conversation's reply box. */
export default async function CannedRepliesPage() {
  const member = await requirePageMember('records.read');
  const replies = await listCannedReplies(member);
  return (
    <>
      <p>
        <a href="/inbox">← Inbox</a>
      </p>
      <h1>Canned replies</h1>
      <p className="muted">Type a reply's shortcut (for example /thanks) in a conversation's reply box to use it.</p>
      <CannedReplies replies={replies} />
    </>
  );
}
