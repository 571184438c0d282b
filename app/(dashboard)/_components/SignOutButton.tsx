'use client';
import { signOut } from 'next-auth/react';

export function SignOutButton() {
  return (
    <button type="button" className="btn secondary" style={{ margin: '.5rem .75rem' }} onClick={() => signOut({ callbackUrl: '/login' })}>
      Sign out
    </button>
  );
}
