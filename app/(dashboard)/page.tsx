import { requireDashboardSession } from '@/lib/auth/session';
import { getOverview } from '@/lib/dashboard/service';

export const metadata = { title: 'Overview · svc' };

export default async function OverviewPage() {
  const { accountId } = await requireDashboardSession();
  const { totals, perDay, channels } = await getOverview(accountId);
  const max = Math.max(1, ...perDay.map((d) => d.responses));
  const rated = totals.likes + totals.dislikes;
  const likedShare = rated ? Math.round((totals.likes / rated) * 100) : 0;
  return (
    <>
      <h1>Overview</h1>
      <div className="cards">
        <div className="card"><div className="label">Conversations</div><div className="value">{totals.conversations.toLocaleString('en')}</div></div>
        <div className="card"><div className="label">Responses</div><div className="value">{totals.responses.toLocaleString('en')}</div></div>
        <div className="card"><div className="label">Channels</div><div className="value">{totals.channels}</div></div>
        <div className="card"><div className="label">Comments</div><div className="value">{totals.comments.toLocaleString('en')}</div></div>
      </div>
      <section className="panel" aria-labelledby="activity">
        <h2 id="activity" style={{ marginTop: 0 }}>Responses per day (last 30 days, UTC)</h2>
        {perDay.every((d) => d.responses === 0) ? <p className="empty">No responses in the last 30 days.</p> : (
          <div className="bars" role="img" aria-label={`Responses per day; highest ${max}`}>
            {perDay.map((d) => (
              <div key={d.day} className="bar" title={`${d.day}: ${d.responses}`} style={{ height: `${(d.responses / max) * 100}%` }} />
            ))}
          </div>
        )}
        <p className="muted" style={{ fontSize: '.8rem', display: 'flex', justifyContent: 'space-between' }}>
          <span>{perDay[0]?.day}</span><span>{perDay.at(-1)?.day}</span>
        </p>
      </section>
      <div className="split">
        <section className="panel" aria-labelledby="feedback">
          <h2 id="feedback" style={{ marginTop: 0 }}>Feedback</h2>
          {rated === 0 ? <p className="empty">No likes or dislikes yet.</p> : (
            <>
              <p><strong>{totals.likes}</strong> likes · <strong>{totals.dislikes}</strong> dislikes ({likedShare}% liked)</p>
              <div className="meter" role="meter" aria-valuemin={0} aria-valuemax={100} aria-valuenow={likedShare} aria-label="Share of likes">
                <span style={{ width: `${likedShare}%` }} />
              </div>
            </>
          )}
        </section>
        <section className="panel" aria-labelledby="busiest">
          <h2 id="busiest" style={{ marginTop: 0 }}>Busiest channels</h2>
          {channels.length === 0 ? <p className="empty">No channels yet.</p> : (
            <table className="simple">
              <thead><tr><th scope="col">Channel</th><th scope="col">Conversations</th><th scope="col">Responses</th></tr></thead>
              <tbody>
                {channels.map((c) => (
                  <tr key={c.id}><td><a href={`/responses?channel=${c.id}`}>{c.name}</a> <span className="muted">#{c.id}</span></td><td>{c.conversations}</td><td>{c.responses}</td></tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      </div>
    </>
  );
}
