import type { ReactNode } from 'react';
import { can, type Action } from '@/lib/auth/roles';
import { requireDashboardSession } from '@/lib/auth/session';
import { Nav } from './_components/Nav';
import { SignOutButton } from './_components/SignOutButton';

export const dynamic = 'force-dynamic';

const LINKS: ReadonlyArray<readonly [string, string, Action]> = [
  ['/', 'Overview', 'records.read'], ['/conversations', 'Conversations', 'records.read'], ['/responses', 'Responses', 'records.read'],
  ['/knowledge', 'Knowledge base', 'knowledge.read'], ['/bot', 'Bot', 'bot.manage'], ['/widget', 'Widget', 'widget.manage'],
  ['/api-keys', 'API keys', 'api_keys.manage'], ['/webhooks', 'Webhooks', 'webhooks.manage'], ['/team', 'Team', 'team.manage'],
  ['/profile', 'Profile', 'records.read'],
];

export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const session = await requireDashboardSession();
  // A member who must set up two-factor first can open only their profile.
  const links = LINKS.filter(([href, , action]) => can(session.role, action) && (!session.mustSetUpTwoFactor || href === '/profile'))
    .map(([href, label]) => [href, label] as const);
  return (
    <div className="shell">
      <a className="skip" href="#main">Skip to content</a>
      <aside className="sidebar">
        <a className="brand" href="/">svc</a>
        <Nav links={links} />
        <div className="account">{session.email} <span className="muted" style={{ whiteSpace: 'nowrap' }}>({session.role})</span></div>
        <SignOutButton />
      </aside>
      <main className="main" id="main">{children}</main>
    </div>
  );
}
