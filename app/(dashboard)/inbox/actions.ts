'use server';
// Conversation actions are `/inbox` socket requests (lib/inbox/socket.ts); these are the page forms'.
import { revalidatePath } from 'next/cache';
import { requireMember } from '@/lib/auth/session';
import { actionResult } from '@/lib/dashboard/action-result';
import { createCannedReply, deleteCannedReply, updateCannedReply } from '@/lib/conversations/canned-replies';
import { setAvailability } from '@/lib/conversations/availability';

const member = () => requireMember('records.read');
const done = <T extends object>(path: string, v: T) => {
  revalidatePath(path);
  return { ...v };
};

export async function setAvailabilityAction(availability: 'online' | 'away') {
  return actionResult(async () => done('/inbox', { availability: await setAvailability(await member(), availability) }));
}

export async function createReplyAction(_prev: unknown, form: FormData) {
  return actionResult(async () => done('/inbox/replies', await createCannedReply(await member(), { shortcut: form.get('shortcut'), text: form.get('text') })));
}

export async function updateReplyAction(id: string, _prev: unknown, form: FormData) {
  return actionResult(async () =>
    done('/inbox/replies', await updateCannedReply(await member(), { id, shortcut: form.get('shortcut'), text: form.get('text') })),
  );
}

export async function deleteReplyAction(id: string) {
  return actionResult(async () => done('/inbox/replies', await deleteCannedReply(await member(), { id })));
}
