import { can } from '@/lib/auth/roles';
import { requirePageMember } from '@/lib/auth/session';
import { getTeam } from '@/lib/team/service';
import stacked from '../_components/stacked-table.module.css';
import { InviteForm, InvitationActions, MemberActions, RequireTwoFactorForm } from './TeamForms';

export const metadata = { title: 'Team · svc' };

const when = (d: Date | null) => (d ? new Date(d).toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : 'never');

export default async function TeamPage() {
  const session = await requirePageMember('team.manage');
  const team = await getTeam(session);
  const owner = can(session.role, 'team.own');
  return (
    <>
      <h1>Team</h1>
      <p className="muted">Owners and admins manage everything; agents answer conversations and read the knowledge base.</p>
      <InviteForm />
      <section className="panel" aria-labelledby="members-heading">
        <h2 id="members-heading" style={{ marginTop: 0 }}>
          Members
        </h2>
        <div className="table-scroll">
          <table className={`simple ${stacked.stack}`}>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Two-factor</th>
                <th scope="col">Last seen</th>
                <th scope="col">
                  <span className="skip">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {team.members.map((m) => (
                <tr key={m.id} data-testid={`member-${m.email}`}>
                  <td data-label="Name">
                    <span>
                      {m.name || '—'}
                      {m.id === session.userId && <span className="muted"> (you)</span>}
                    </span>
                  </td>
                  <td data-label="Email" style={{ overflowWrap: 'break-word' }}>
                    {m.email}
                  </td>
                  <td data-label="Role">
                    <span className="badge">{m.role}</span>
                  </td>
                  <td data-label="Two-factor">{m.twoFactor ? <span className="badge">on</span> : <span className="badge off">off</span>}</td>
                  <td data-label="Last seen" style={{ whiteSpace: 'nowrap' }}>
                    {when(m.lastSeenAt)}
                  </td>
                  <td data-label="">{m.role !== 'owner' && <MemberActions userId={m.id} email={m.email} role={m.role} canTransfer={owner} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section className="panel" aria-labelledby="invitations-heading">
        <h2 id="invitations-heading" style={{ marginTop: 0 }}>
          Pending invitations
        </h2>
        {team.invitations.length === 0 ? (
          <p className="empty">No pending invitations.</p>
        ) : (
          <div className="table-scroll">
            <table className={`simple ${stacked.stack}`}>
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Sent</th>
                  <th scope="col">Expires</th>
                  <th scope="col">
                    <span className="skip">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {team.invitations.map((i) => (
                  <tr key={i.id} data-testid={`invitation-${i.email}`}>
                    <td data-label="Email" style={{ overflowWrap: 'break-word' }}>
                      {i.email}
                    </td>
                    <td data-label="Role">
                      <span className="badge">{i.role}</span>
                    </td>
                    <td data-label="Sent" style={{ whiteSpace: 'nowrap' }}>
                      {when(i.createdAt)}
                    </td>
                    <td data-label="Expires" style={{ whiteSpace: 'nowrap' }}>
                      {when(i.expiresAt)}
                    </td>
                    <td data-label="">
                      <InvitationActions id={i.id} email={i.email} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {owner && <RequireTwoFactorForm on={team.requireTwoFactor} />}
    </>
  );
}
