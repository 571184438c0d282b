import { requirePageMember } from '@/lib/auth/session';
import { RANGE_CHOICES, addDays, rangeHref } from '@/lib/dashboard/overview-range';
import { getOverview } from '@/lib/dashboard/service';
import { plural } from '@/lib/dashboard/format';

export const metadata = { title: 'Overview · svc' };

const BUCKET_LABEL = { day: 'day', week: 'week', month: 'month' } as const;

export default async function OverviewPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { accountId } = await requirePageMember('records.read');
  const { totals, span, range, perBucket, channels } = await getOverview(accountId, await searchParams);
  const max = Math.max(1, ...perBucket.map((d) => d.responses));
  const inRange = perBucket.reduce((n, d) => n + d.responses, 0);
  const rated = totals.likes + totals.dislikes;
  const likedShare = rated ? Math.round((totals.likes / rated) * 100) : 0;
  const rangeText =
    range.key === 'custom'
      ? `${range.from} to ${range.to}`
      : range.key === 'all'
        ? 'all time'
        : range.key === '365'
          ? 'last 12 months'
          : `last ${RANGE_CHOICES.find((c) => c.key === range.key)!.label}`;
  const bucketEnd = (day: string) =>
    range.bucket === 'day' ? '' : ` to ${range.bucket === 'week' ? addDays(day, 6) : addDays(addDays(day, 31).slice(0, 8) + '01', -1)}`;
  return (
    <>
      <h1>Overview</h1>
      <div className="cards">
        <div className="card">
          <div className="label">Conversations</div>
          <div className="value">{totals.conversations.toLocaleString('en')}</div>
        </div>
        <div className="card">
          <div className="label">Responses</div>
          <div className="value">{totals.responses.toLocaleString('en')}</div>
        </div>
        <div className="card">
          <div className="label">Channels</div>
          <div className="value">{totals.channels.toLocaleString('en')}</div>
        </div>
        <div className="card">
          <div className="label">Comments</div>
          <div className="value">{totals.comments.toLocaleString('en')}</div>
        </div>
      </div>
      <section className="panel" aria-labelledby="activity">
        <div className="chart-head">
          <h2 id="activity">
            Responses per {BUCKET_LABEL[range.bucket]} <span className="muted">({rangeText}, UTC)</span>
          </h2>
          <nav className="segmented" aria-label="Chart range">
            {RANGE_CHOICES.map((c) => (
              <a key={c.key} href={rangeHref(c.key)} aria-current={range.key === c.key ? 'true' : undefined}>
                {c.label}
              </a>
            ))}
          </nav>
        </div>
        <form className="range-form" method="get" action="/" aria-label="Custom range">
          <label>
            From <input type="date" name="from" defaultValue={range.from} max="2199-12-31" required />
          </label>
          <label>
            To <input type="date" name="to" defaultValue={range.to} max="2199-12-31" required />
          </label>
          <button className="btn secondary" type="submit">
            Show
          </button>
        </form>
        {inRange === 0 ? (
          <p className="empty">
            No responses {range.key === 'custom' ? `from ${range.from} to ${range.to}` : `in the ${rangeText}`}.
            {span.last && range.key !== 'all' && (
              <>
                {' '}
                The account has responses from {span.first} to {span.last}: <a href={rangeHref('all')}>show all time</a>.
              </>
            )}
          </p>
        ) : (
          <>
            <div
              className="bars"
              role="img"
              aria-label={`${plural(inRange, 'response', 'responses')} ${range.key === 'custom' ? `from ${range.from} to ${range.to}` : `in the ${rangeText}`}; busiest ${range.bucket} ${plural(max, 'response', 'responses')}`}
              style={{ gap: perBucket.length > 60 ? 1 : 3 }}
            >
              {perBucket.map((d) => (
                <div
                  key={d.day}
                  className="bar"
                  title={`${d.day}${bucketEnd(d.day)}: ${plural(d.responses, 'response', 'responses')}`}
                  style={{ height: `${(d.responses / max) * 100}%` }}
                />
              ))}
            </div>
            <p className="muted chart-axis">
              <span>{perBucket[0]?.day}</span>
              <span>
                {plural(inRange, 'response', 'responses')} · busiest {range.bucket}: {max.toLocaleString('en')}
              </span>
              <span>{perBucket.at(-1)?.day}</span>
            </p>
          </>
        )}
      </section>
      <div className="split">
        <section className="panel" aria-labelledby="feedback">
          <h2 id="feedback" style={{ marginTop: 0 }}>
            Feedback
          </h2>
          {rated === 0 ? (
            <p className="empty">No likes or dislikes yet.</p>
          ) : (
            <>
              <p>
                <strong>{plural(totals.likes, 'like', 'likes')}</strong> · <strong>{plural(totals.dislikes, 'dislike', 'dislikes')}</strong> ({likedShare}%
                liked)
              </p>
              <div className="meter" role="meter" aria-valuemin={0} aria-valuemax={100} aria-valuenow={likedShare} aria-label="Share of likes">
                <span style={{ width: `${likedShare}%` }} />
              </div>
            </>
          )}
        </section>
        <section className="panel" aria-labelledby="busiest">
          <h2 id="busiest" style={{ marginTop: 0 }}>
            Busiest channels
          </h2>
          {channels.length === 0 ? (
            <p className="empty">No channels yet.</p>
          ) : (
            <table className="simple">
              <thead>
                <tr>
                  <th scope="col">Channel</th>
                  <th scope="col" className="num">
                    Conversations
                  </th>
                  <th scope="col" className="num">
                    Responses
                  </th>
                </tr>
              </thead>
              <tbody>
                {channels.map((c) => (
                  <tr key={c.id}>
                    <td>
                      <a href={`/responses?channel=${c.id}`}>{c.name}</a> <span className="muted nowrap">#{c.id}</span>
                    </td>
                    <td className="num">{c.conversations.toLocaleString('en')}</td>
                    <td className="num">{c.responses.toLocaleString('en')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      </div>
    </>
  );
}
