import { requirePageMember } from '@/lib/auth/session';
import { figuresOf, getInsightsPage } from '@/lib/dashboard/insights';
import { InsightsChart } from './_components/InsightsChart';
import { WindowHead } from './_components/WindowHead';

export const metadata = { title: 'Insights · svc' };

export default async function InsightsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { accountId } = await requirePageMember('records.read');
  const { record, days, channels, range, error } = await getInsightsPage(accountId, await searchParams);
  const dates = days.map((d) => d.date);
  const channelQuery = record.channel_id === null ? '' : `&channel_id=${record.channel_id}`;
  return (
    <>
      <h1>Insights</h1>
      <WindowHead path="/insights" range={range} error={error} query={channelQuery}>
        {record.from} to {record.to} (UTC){record.channel_id !== null && <>, channel #{record.channel_id}</>} · <a href="/insights/gaps">Content gaps</a>
      </WindowHead>
      <form className="range-form" method="get" action="/insights" aria-label="Window">
        <label>
          From <input type="date" name="from" defaultValue={record.from} required />
        </label>
        <label>
          To <input type="date" name="to" defaultValue={record.to} required />
        </label>
        <label htmlFor="insights-channel">Channel</label>
        <select id="insights-channel" name="channel_id" defaultValue={record.channel_id === null ? '' : String(record.channel_id)}>
          <option value="">All channels</option>
          {channels.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name} (#{c.id})
            </option>
          ))}
        </select>
        <button className="btn secondary" type="submit">
          Show
        </button>
      </form>
      <div className="insights-grid">
        {figuresOf(record, days).map((f) => (
          <section key={f.key} className="panel insights-figure" aria-labelledby={`fig-${f.key}`}>
            <h2 id={`fig-${f.key}`}>{f.title}</h2>
            <p className="insights-value" data-figure={f.key}>
              {f.value}
              {f.detail && <span className="muted"> · {f.detail}</span>}
            </p>
            <p className="muted insights-definition">{f.definition}</p>
            <InsightsChart dates={dates} series={f.series} unit={f.unit} label={`${f.title} per day from ${record.from} to ${record.to}`} />
          </section>
        ))}
      </div>
    </>
  );
}
