import { requirePageMember } from '@/lib/auth/session';
import { getChannels } from '@/lib/dashboard/service';
import { parseTableState } from '@/lib/dashboard/table-state';
import { RecordsTable } from '../_components/RecordsTable';

export const metadata = { title: 'Conversations · svc' };

export default async function ConversationsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { accountId } = await requirePageMember('records.read');
  const channels = (await getChannels(accountId)).map((c) => ({ id: c.id, name: c.name }));
  const initial = parseTableState(
    'conversations',
    await searchParams,
    channels.map((c) => c.id),
  );
  return (
    <>
      <h1>Conversations</h1>
      <RecordsTable kind="conversations" channels={channels} initial={initial} />
    </>
  );
}
