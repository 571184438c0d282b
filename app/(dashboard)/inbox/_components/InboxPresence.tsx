'use client';
import { useEffect } from 'react';
import { inboxSocket } from './useInboxSocket';

/** Opens the member's `/inbox` socket on every dashboard page: an open dashboard counts them as there. */
export function InboxPresence() {
  useEffect(() => {
    inboxSocket();
  }, []);
  return null;
}
