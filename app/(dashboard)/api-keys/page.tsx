import { requireDashboardSession } from '@/lib/auth/session';
import { getApiKeys } from '@/lib/dashboard/service';
import { getEnv } from '@/lib/env';
import { CreateKeyForm, RevokeButton } from './KeyForms';

export const metadata = { title: 'API keys · svc' };

const when = (d: Date | null) => (d ? new Date(d).toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : '—');

export default async function ApiKeysPage() {
  const { accountId } = await requireDashboardSession();
  const keys = await getApiKeys(accountId);
  const env = getEnv().SVC_ENV;
  return (
    <>
      <h1>API keys</h1>
      <p className="muted">Keys read this account&apos;s records through the Customer API (<code>Authorization: Bearer &lt;key&gt;</code>). A key is shown once, when it is created.</p>
      <CreateKeyForm env={env} />
      <section className="panel" aria-labelledby="keys-heading">
        <h2 id="keys-heading" style={{ marginTop: 0 }}>Keys</h2>
        {keys.length === 0 ? <p className="empty">No API keys yet.</p> : (
          <div className="table-scroll">
            <table className="simple">
              <thead><tr><th scope="col">Key id</th><th scope="col">Name</th><th scope="col">Environment</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span className="skip">Actions</span></th></tr></thead>
              <tbody>
                {keys.map((k) => (
                  <tr key={k.keyId}>
                    <td><code>{k.keyId}</code></td><td>{k.name}</td><td>{k.env}{k.env !== env && <> <span className="badge warn">not accepted here</span></>}</td><td>{when(k.createdAt)}</td><td>{when(k.lastUsedAt)}</td>
                    <td>{k.revokedAt ? <span className="badge off">revoked</span> : <span className="badge">active</span>}</td>
                    <td>{!k.revokedAt && <RevokeButton keyId={k.keyId} name={k.name} />}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
