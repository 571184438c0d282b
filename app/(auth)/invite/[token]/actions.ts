'use server';
import { headers } from 'next/headers';
import { actionResult } from '@/lib/dashboard/action-result';
import { PEER_IP_HEADER } from '@/lib/net/client-address';
import { acceptInvitation } from '@/lib/team/service';

export async function acceptInvitationAction(token: string, _prev: unknown, form: FormData) {
  const ip = (await headers()).get(PEER_IP_HEADER) ?? 'unknown';
  return actionResult(async () => {
    const r = await acceptInvitation(token, { name: form.get('name'), password: form.get('password') }, ip);
    return { ticket: r.ticket };
  });
}
