import { requirePageMember } from '@/lib/auth/session';
import { getApiKeys } from '@/lib/dashboard/service';
import { getEnv } from '@/lib/env';
import stacked from '../_components/stacked-table.module.css';
import { CreateKeyForm, RevokeButton } from './KeyForms';

export const metadata = { title: 'API keys · svc' };

const when = (d: Date | null) => (d ? new Date(d).toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : '—');

export default async function ApiKeysPage() {
  const { accountId } = await requirePageMember('api_keys.manage');
  const keys = await getApiKeys(accountId);
  const env = getEnv().SVC_ENV;
  return (
    <>
      <h1>API keys</h1>
      <p className="muted">
        Keys read this account&apos;s records through the Customer API (<code>Authorization: Bearer &lt;key&gt;</code>). A key is shown once, when it is
        created. The <a href="/docs/api">API reference</a> lists every operation, with examples.
      </p>
      <CreateKeyForm env={env} />
      <section className="panel" aria-labelledby="keys-heading">
        <h2 id="keys-heading" style={{ marginTop: 0 }}>
          Keys
        </h2>
        {keys.length === 0 ? (
          <p className="empty">No API keys yet.</p>
        ) : (
          <div className="table-scroll">
            <table className={`simple ${stacked.stack}`}>
              <thead>
                <tr>
                  <th scope="col">Key id</th>
                  <th scope="col">Name</th>
                  <th scope="col">Environment</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span className="skip">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.map((k) => (
                  <tr key={k.keyId}>
                    <td data-label="Key id">
                      <code>{k.keyId}</code>
                    </td>
                    <td data-label="Name" style={{ overflowWrap: 'anywhere' }}>
                      {k.name}
                    </td>
                    <td data-label="Environment">
                      <span>
                        {k.env}
                        {k.env !== env && (
                          <>
                            {' '}
                            <span className="badge warn">not accepted here</span>
                          </>
                        )}
                      </span>
                    </td>
                    <td data-label="Created" style={{ whiteSpace: 'nowrap' }}>
                      {when(k.createdAt)}
                    </td>
                    <td data-label="Last used" style={{ whiteSpace: 'nowrap' }}>
                      {when(k.lastUsedAt)}
                    </td>
                    <td data-label="Status">{k.revokedAt ? <span className="badge off">revoked</span> : <span className="badge">active</span>}</td>
                    <td data-label="">{!k.revokedAt && <RevokeButton keyId={k.keyId} name={k.name} />}</td>
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
