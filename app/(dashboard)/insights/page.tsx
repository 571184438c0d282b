import { requirePageMember } from '@/lib/auth/session';
import { INSIGHTS_RANGES, figuresOf, getInsightsPage } from '@/lib/dashboard/insights';
import { InsightsChart } from './_components/InsightsChart';

export const metadata = { title: 'Insights · svc' };

export default async function InsightsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { accountId } = await requirePageMember('records.read');
  const { record, days, channels, range, error } = await getInsightsPage(accountId, await searchParams);
  const dates = days.map((d) => d.date);
  const channelQuery = record.channel_id === null ? '' : `&channel_id=${record.channel_id}`;
  return (
    <>
      <h1>Insights</h1>
      {error && (
        <p className="error" role="alert">
          {error} Showing the last 30 days.
        </p>
      )}
      <div className="chart-head">
        <p className="muted" style={{ margin: 0 }}>
          {record.from} to {record.to} (UTC){record.channel_id !== null && <>, channel #{record.channel_id}</>} · <a href="/insights/gaps">Content gaps</a>
        </p>
        <nav className="segmented" aria-label="Range">
          {INSIGHTS_RANGES.map((r) => (
            <a key={r} href={`/insights?range=${r}${channelQuery}`} aria-current={range === r ? 'true' : undefined}>
              {r === '365' ? '1 year' : `${r} days`}
            </a>
          ))}
        </nav>
      </div>
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
