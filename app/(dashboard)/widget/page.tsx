import { headers } from 'next/headers';
import { requirePageMember } from '@/lib/auth/session';
import { recentSightings } from '@/lib/chat/sightings';
import { getChannels } from '@/lib/dashboard/service';
import { storedAppearance } from '@/lib/widget-clients/appearance';
import { recentRefusals } from '@/lib/widget-clients/refusals';
import { embedVersions, listClients } from '@/lib/widget-clients/service';
import { trackVersions } from '@/lib/widget-releases/service';
import stacked from '../_components/stacked-table.module.css';
import { RefusalsPanel } from './RefusalsPanel';
import { ClientRow, ClientsWorkspace } from './WidgetForms';

export const metadata = { title: 'Widget · svc' };

export default async function WidgetPage() {
  const { accountId } = await requirePageMember('widget.manage');
  const [clients, channels, sightings, refusals, tracks] = await Promise.all([
    listClients(accountId),
    getChannels(accountId),
    recentSightings(accountId, 30),
    recentRefusals(accountId),
    trackVersions(),
  ]);
  const h = await headers();
  const origin = `${h.get('x-forwarded-proto') ?? 'http'}://${h.get('host') ?? 'localhost:3000'}`;
  const channelName = new Map(channels.map((c) => [c.id, c.name]));
  const clientName = new Map(clients.map((c) => [c.id, c.name]));
  return (
    <>
      <h1>Widget</h1>
      <section className="panel" aria-labelledby="clients-heading">
        <h2 id="clients-heading" style={{ marginTop: 0 }}>
          Widget clients
        </h2>
        <p className="muted">
          A client may run only on its registered domains (<code>example.com</code>, or <code>*.example.com</code> for subdomains; any port).
        </p>
        {clients.length === 0 ? (
          <p className="empty">No widget clients yet: create one below.</p>
        ) : (
          <div className="table-scroll">
            <table className={`simple ${stacked.stack}`}>
              <thead>
                <tr>
                  <th scope="col">Client</th>
                  <th scope="col">Channel</th>
                  <th scope="col">Domains</th>
                  <th scope="col">
                    <span className="skip">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {clients.map((c) => (
                  <ClientRow key={c.id} clientId={c.id} name={c.name} domains={c.domains} channel={`${channelName.get(c.channelId) ?? ''} #${c.channelId}`} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <ClientsWorkspace
        origin={origin}
        versions={embedVersions()}
        tracks={tracks}
        clients={clients.map((c) => ({ id: c.id, name: c.name, appearance: storedAppearance(c.appearance) }))}
        channels={channels.map((c) => ({ id: c.id, name: c.name }))}
      />
      <section className="panel" aria-labelledby="seen-heading">
        <h2 id="seen-heading" style={{ marginTop: 0 }}>
          Where the widget runs (last 30 days)
        </h2>
        {sightings.length === 0 ? (
          <p className="empty">No widget connections yet.</p>
        ) : (
          <div className="table-scroll">
            <table className={`simple ${stacked.stack}`}>
              <thead>
                <tr>
                  <th scope="col">Origin</th>
                  <th scope="col">Widget version</th>
                  <th scope="col">Client</th>
                  <th scope="col">Connections</th>
                  <th scope="col">Last seen (UTC day)</th>
                </tr>
              </thead>
              <tbody>
                {sightings.map((s) => (
                  <tr key={`${s.client_id}-${s.origin}-${s.widget_version}`}>
                    <td data-label="Origin" style={{ whiteSpace: 'nowrap' }}>
                      {s.origin}
                    </td>
                    <td data-label="Version">
                      <span>
                        {s.widget_version} {s.widget_version.startsWith('1.') && <span className="badge warn">legacy 1.0 — migrate</span>}
                      </span>
                    </td>
                    <td data-label="Client">{clientName.get(s.client_id) ?? <code>{s.client_id}</code>}</td>
                    <td data-label="Connections">{s.connections}</td>
                    <td data-label="Last seen" style={{ whiteSpace: 'nowrap' }}>
                      {s.last_day}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <RefusalsPanel refusals={refusals} />
    </>
  );
}
