import { requireDashboardSession } from '@/lib/auth/session';
import { getChannels } from '@/lib/dashboard/service';
import { RecordsTable } from '../_components/RecordsTable';

export const metadata = { title: 'Responses · svc' };

export default async function ResponsesPage({ searchParams }: { searchParams: Promise<{ channel?: string }> }) {
  const { accountId } = await requireDashboardSession();
  const channels = (await getChannels(accountId)).map((c) => ({ id: c.id, name: c.name }));
  const { channel } = await searchParams;
  const initial = channels.some((c) => String(c.id) === channel) ? channel : undefined;
  return (
    <>
      <h1>Responses</h1>
      <RecordsTable kind="responses" channels={channels} initialChannel={initial} />
    </>
  );
}
