import type { RefusalRow } from '@/lib/widget-clients/refusals';
import stacked from '../_components/stacked-table.module.css';

/** What to do about each refusal reason (the reason is the stable prefix of the refusal message). */
const HINTS: Record<string, string> = {
  'domain not allowed': 'Add this host to the client’s domains (Edit domains), or load the widget from a registered site.',
  'no Origin header': 'Client-id mode works only from a browser page; a server must send the client secret.',
  'wrong client secret': 'Your backend sends an old or wrong secret: set SVC_CLIENT_SECRET to the current one.',
  'token expired': 'The page kept a token past its lifetime: use svcClientId or tokenEndpoint so the widget renews it.',
  'token invalid': 'The token was not issued by this service, or its client was deleted.',
  'client_key in the address is not accepted': 'An old integration: remove client_key and pass the access token.',
};

export function RefusalsPanel({ refusals }: { refusals: RefusalRow[] }) {
  return (
    <section className="panel" aria-labelledby="refused-heading">
      <h2 id="refused-heading" style={{ marginTop: 0 }}>
        Refused connections (last 30 days)
      </h2>
      <p className="muted" style={{ marginTop: 0 }}>
        When the widget does not appear on a site, the reason is here, per client and origin (updated every 15 seconds): connections refused with a token this
        service issued, and token requests or connections refused on the client’s own domains. A client-id request from a site that is not registered is refused
        in that browser’s console only, since anyone can send one.
      </p>
      {refusals.length === 0 ? (
        <p className="empty">No refused connections.</p>
      ) : (
        <div className="table-scroll">
          <table className={`simple ${stacked.stack}`} data-testid="refusals">
            <thead>
              <tr>
                <th scope="col">Origin</th>
                <th scope="col">Client</th>
                <th scope="col">Refused</th>
                <th scope="col">Why</th>
                <th scope="col">Count</th>
                <th scope="col">Last (UTC)</th>
              </tr>
            </thead>
            <tbody>
              {refusals.map((r) => (
                <tr key={`${r.client_id}|${r.origin}|${r.stage}|${r.reason}`}>
                  <td data-label="Origin" style={{ whiteSpace: 'nowrap' }}>
                    {r.origin || <span className="muted">(no Origin header)</span>}
                  </td>
                  <td data-label="Client" style={{ whiteSpace: 'nowrap' }}>
                    {r.client_name}
                  </td>
                  <td data-label="Refused" style={{ whiteSpace: 'nowrap' }}>
                    {r.stage === 'token' ? 'token request' : 'connection'}
                  </td>
                  <td data-label="Why" style={{ minWidth: '16rem' }}>
                    <div>
                      <strong>{r.reason}</strong>
                      <div className="muted" style={{ fontSize: '.82rem', overflowWrap: 'anywhere' }}>
                        {r.detail}
                      </div>
                      {HINTS[r.reason] && <div style={{ fontSize: '.82rem', marginTop: '.2rem' }}>{HINTS[r.reason]}</div>}
                    </div>
                  </td>
                  <td data-label="Count">{r.count}</td>
                  <td data-label="Last" style={{ whiteSpace: 'nowrap' }}>
                    {r.last_seen}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
