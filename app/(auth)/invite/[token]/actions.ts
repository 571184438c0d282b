'use server';
import { actionResult } from '@/lib/dashboard/action-result';
import { acceptInvitation } from '@/lib/team/service';

export async function acceptInvitationAction(token: string, _prev: unknown, form: FormData) {
  return actionResult(async () => {
    const r = await acceptInvitation(token, { name: form.get('name'), password: form.get('password') });
    return { ticket: r.ticket };
  });
}
