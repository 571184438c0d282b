import type { ReactNode } from 'react';
import { DASHBOARD_PAGES } from '@/lib/auth/pages';
import { can } from '@/lib/auth/roles';
import { requireDashboardSession } from '@/lib/auth/session';
import { InboxPresence } from './inbox/_components/InboxPresence';
import { Nav } from './_components/Nav';
import { SignOutButton } from './_components/SignOutButton';

export const dynamic = 'force-dynamic';

export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const session = await requireDashboardSession();
  // A member who must set up two-factor first can open only their profile.
  const links = DASHBOARD_PAGES.filter((p) => can(session.role, p.action) && (!session.mustSetUpTwoFactor || p.path === '/profile')).map(
    (p) => [p.path, p.label] as const,
  );
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <aside className="sidebar">
        <a className="brand" href="/">
          svc
        </a>
        <Nav links={links} />
        <div className="account">
          {session.email}{' '}
          <span className="muted" style={{ whiteSpace: 'nowrap' }}>
            ({session.role})
          </span>
        </div>
        <SignOutButton />
      </aside>
      <main className="main" id="main">
        {children}
      </main>
      {!session.mustSetUpTwoFactor && <InboxPresence />}
    </div>
  );
}
