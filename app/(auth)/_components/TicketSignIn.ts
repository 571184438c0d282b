'use client';
import { signIn } from 'next-auth/react';

/** Exchanges a sign-in ticket (an accepted invitation, a confirmed sign-up) for a session, then opens `to`. */
export async function signInWithTicket(ticket: string, to = '/'): Promise<boolean> {
  const res = await signIn('credentials', { redirect: false, ticket });
  if (res?.ok && !res.error) {
    window.location.assign(to);
    return true;
  }
  return false;
}
