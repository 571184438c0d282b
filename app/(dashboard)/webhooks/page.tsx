import { requirePageMember } from '@/lib/auth/session';
import { listWebhookDeliveries, listWebhookEndpoints } from '@/lib/webhooks/service';
import { DELIVERY_LOG_LIMIT, REPLAY_HOURS, RETENTION_DAYS, WEBHOOK_EVENT_TYPES } from '@/lib/webhooks/rules';
import stacked from '../_components/stacked-table.module.css';
import { CreateEndpointForm, EndpointActions, SendAgainButton } from './WebhookForms';
import { isUuid } from '@/lib/core/validation';

export const metadata = { title: 'Webhooks · svc' };

export default async function WebhooksPage({ searchParams }: { searchParams: Promise<{ endpoint?: string | string[] }> }) {
  const { accountId } = await requirePageMember('webhooks.manage');
  const { endpoints } = await listWebhookEndpoints(accountId);
  const wanted = (await searchParams).endpoint;
  const selected = endpoints.find((e) => isUuid(wanted) && e.endpoint_id === wanted.toLowerCase()) ?? (endpoints.length === 1 ? endpoints[0] : undefined);
  const log = selected ? await listWebhookDeliveries(accountId, selected.endpoint_id) : [];
  return (
    <>
      <h1>Webhooks</h1>
      <p className="muted">
        Each endpoint receives a signed <code>POST</code> (Standard Webhooks: <code>webhook-id</code>, <code>webhook-timestamp</code>,{' '}
        <code>webhook-signature</code>) when a visitor starts a conversation, an answer is stored, or feedback changes an answer. Failed deliveries are retried
        for over 24 hours; an endpoint that fails for 5 days is paused. While an endpoint is paused its deliveries are held; <strong>Resume</strong> sends those
        of the last {REPLAY_HOURS} hours, in order, and marks older ones failed (they can still be sent again). The delivery log keeps {RETENTION_DAYS} days.
      </p>
      <CreateEndpointForm eventTypes={WEBHOOK_EVENT_TYPES} />
      <section className="panel" aria-labelledby="endpoints-heading">
        <h2 id="endpoints-heading" style={{ marginTop: 0 }}>
          Endpoints
        </h2>
        {endpoints.length === 0 ? (
          <p className="empty">No webhook endpoints yet.</p>
        ) : (
          <div className="table-scroll">
            <table className={`simple ${stacked.stack}`}>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">Status</th>
                  <th scope="col">Last delivery</th>
                  <th scope="col">
                    <span className="skip">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {endpoints.map((e) => (
                  <tr key={e.endpoint_id}>
                    <td data-label="URL" style={{ whiteSpace: 'normal' }}>
                      <a
                        href={`/webhooks?endpoint=${e.endpoint_id}`}
                        aria-label={`Deliveries of ${e.url}`}
                        style={{ wordBreak: 'break-all', maxWidth: '100%' }}
                      >
                        {e.url}
                      </a>
                    </td>
                    <td data-label="Events">
                      <span style={{ maxWidth: '100%' }}>
                        {e.events.map((t) => (
                          <code key={t} style={{ display: 'block', overflowWrap: 'anywhere' }}>
                            {/* A break after the dot: "conversation.status_changed" is wider than a phone's card. */}
                            {t.split('.').map((part, i) => (i === 0 ? part : [<wbr key={part} />, `.${part}`]))}
                          </code>
                        ))}
                      </span>
                    </td>
                    <td data-label="Status" style={{ whiteSpace: 'normal' }}>
                      {e.status === 'paused' ? (
                        <span>
                          <span className="badge warn">paused</span>
                          {e.pause_reason && (
                            <span className="muted" style={{ display: 'block', fontSize: '.8rem' }}>
                              {e.pause_reason}
                            </span>
                          )}
                        </span>
                      ) : (
                        <span>
                          <span className="badge">active</span>
                          {e.failing_since && (
                            <span className="muted" style={{ display: 'block', fontSize: '.8rem' }}>
                              failing since {e.failing_since} UTC
                            </span>
                          )}
                        </span>
                      )}
                    </td>
                    <td data-label="Last delivery" style={{ whiteSpace: 'nowrap' }}>
                      {e.last_delivery ? (
                        <span>
                          {e.last_delivery.status}
                          {e.last_delivery.http_status ? ` (${e.last_delivery.http_status})` : ''}
                          <br />
                          <span className="muted">{e.last_delivery.at ? `${e.last_delivery.at} UTC` : 'not attempted yet'}</span>
                        </span>
                      ) : (
                        '—'
                      )}
                    </td>
                    <td data-label="">
                      <EndpointActions endpointId={e.endpoint_id} url={e.url} paused={e.status === 'paused'} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {selected && (
        <section className="panel" aria-labelledby="log-heading">
          <h2 id="log-heading" style={{ marginTop: 0 }}>
            Deliveries to <span style={{ wordBreak: 'break-all' }}>{selected.url}</span>
          </h2>
          <p className="muted" style={{ fontSize: '.85rem' }}>
            The latest {DELIVERY_LOG_LIMIT}, newest first. Times are UTC. <a href={`/webhooks?endpoint=${selected.endpoint_id}`}>Refresh</a>
          </p>
          {log.length === 0 ? (
            <p className="empty">No deliveries yet.</p>
          ) : (
            <div className="table-scroll">
              <table className={`simple ${stacked.stack}`} aria-label="Delivery log">
                <thead>
                  <tr>
                    <th scope="col">Event</th>
                    <th scope="col">Status</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">HTTP status</th>
                    <th scope="col">Latency</th>
                    <th scope="col">Time</th>
                    <th scope="col">
                      <span className="skip">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {log.map((d) => (
                    <tr key={d.id}>
                      <td data-label="Event" style={{ whiteSpace: 'normal' }}>
                        <span style={{ maxWidth: '100%' }}>
                          <code>{d.type}</code>
                          <br />
                          <span className="muted" style={{ fontSize: '.75rem', wordBreak: 'break-all' }}>
                            {d.event_id}
                          </span>
                        </span>
                      </td>
                      <td data-label="Status" style={{ whiteSpace: 'normal' }}>
                        <span>
                          <span className={`badge ${d.status === 'delivered' ? '' : d.status === 'failed' ? 'warn' : 'off'}`}>{d.status}</span>
                          {d.last_error && (
                            <span className="muted" style={{ display: 'block', fontSize: '.8rem', overflowWrap: 'anywhere' }}>
                              {d.last_error}
                            </span>
                          )}
                          {d.next_attempt_at && d.attempts > 0 && (
                            <span className="muted" style={{ display: 'block', fontSize: '.8rem' }}>
                              next attempt {d.next_attempt_at}
                            </span>
                          )}
                        </span>
                      </td>
                      <td data-label="Attempts">{d.attempts}</td>
                      <td data-label="HTTP status">{d.last_status_code ?? '—'}</td>
                      <td data-label="Latency">{d.last_latency_ms === null ? '—' : `${d.last_latency_ms} ms`}</td>
                      <td data-label="Time" style={{ whiteSpace: 'nowrap' }}>
                        {d.last_attempt_at ?? d.created_at}
                      </td>
                      <td data-label="">{(d.status === 'delivered' || d.status === 'failed') && <SendAgainButton deliveryId={d.id} />}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
      )}
    </>
  );
}
