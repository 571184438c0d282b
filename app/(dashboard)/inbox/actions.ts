'use server';
import { revalidatePath } from 'next/cache';
import { requireMember } from '@/lib/auth/session';
import { actionResult } from '@/lib/dashboard/action-result';
import {
  addNote,
  assignConversation,
  createCannedReply,
  deleteCannedReply,
  handBack,
  replyAsMember,
  resolveConversation,
  setAvailability,
  snoozeConversation,
  takeOver,
  updateCannedReply,
} from '@/lib/conversations/handoff';

const member = () => requireMember('records.read');
const done = <T extends object>(path: string, v: T) => {
  revalidatePath(path);
  return { ...v };
};

export async function setAvailabilityAction(availability: 'online' | 'away') {
  return actionResult(async () => done('/inbox', { availability: await setAvailability(await member(), availability) }));
}

export async function takeOverAction(conversationId: string) {
  return actionResult(async () => done(`/inbox/${conversationId}`, await takeOver(await member(), { conversationId })));
}

export async function assignAction(conversationId: string, userId: number) {
  return actionResult(async () => done(`/inbox/${conversationId}`, await assignConversation(await member(), { conversationId, userId })));
}

export async function replyAction(conversationId: string, text: string) {
  return actionResult(async () => done(`/inbox/${conversationId}`, await replyAsMember(await member(), { conversationId, text })));
}

export async function noteAction(conversationId: string, text: string) {
  return actionResult(async () => done(`/inbox/${conversationId}`, await addNote(await member(), { conversationId, text })));
}

export async function handBackAction(conversationId: string) {
  return actionResult(async () => done(`/inbox/${conversationId}`, await handBack(await member(), { conversationId })));
}

export async function resolveAction(conversationId: string) {
  return actionResult(async () => done(`/inbox/${conversationId}`, await resolveConversation(await member(), { conversationId })));
}

export async function snoozeAction(conversationId: string, until: string) {
  return actionResult(async () => done(`/inbox/${conversationId}`, await snoozeConversation(await member(), { conversationId, until })));
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
