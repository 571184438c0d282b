import { requireDashboardSession } from '@/lib/auth/session';
import { getChannels } from '@/lib/dashboard/service';
import { RecordsTable } from '../_components/RecordsTable';

export const metadata = { title: 'Conversations · svc' };

export default async function ConversationsPage() {
  const { accountId } = await requireDashboardSession();
  const channels = (await getChannels(accountId)).map((c) => ({ id: c.id, name: c.name }));
  return (
    <>
      <h1>Conversations</h1>
      <RecordsTable kind="conversations" channels={channels} />
    </>
  );
}
