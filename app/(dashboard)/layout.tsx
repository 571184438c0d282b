import type { ReactNode } from 'react';
import { requireDashboardSession } from '@/lib/auth/session';
import { Nav } from './_components/Nav';
import { SignOutButton } from './_components/SignOutButton';

export const dynamic = 'force-dynamic';

export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const session = await requireDashboardSession();
  return (
    <div className="shell">
      <a className="skip" href="#main">Skip to content</a>
      <aside className="sidebar">
        <a className="brand" href="/">svc</a>
        <Nav />
        <div className="account">{session.email}</div>
        <SignOutButton />
      </aside>
      <main className="main" id="main">{children}</main>
    </div>
  );
}
