/** Canned replies: an account's saved answers members insert with /shortcut in the Reply box. */
import { getDb } from '../../db/client';
import { deleteCannedReplyRow, insertCannedReply, listCannedReplyRows, updateCannedReplyRow, type CannedReplyRow } from '../../db/queries/canned-replies';
import { validate } from '../accounts/service';
import { requireRole } from '../auth/roles';
import { AppError } from '../core/errors';
import { CannedReplyId, CannedReplyInput } from './handoff-contract';
import type { Member } from './handoff-contract';

export type CannedReply = CannedReplyRow;

export async function listCannedReplies(member: Member): Promise<CannedReply[]> {
  requireRole(member, 'records.read');
  return listCannedReplyRows(await getDb(), member.accountId);
}

const shortcutTaken = (shortcut: string) =>
  new AppError('conflict', `The shortcut /${shortcut} is taken in this account.`, { errors: [{ param: 'shortcut', message: 'is taken in this account' }] });

export async function createCannedReply(member: Member, input: unknown): Promise<CannedReply> {
  requireRole(member, 'records.read');
  const v = validate(CannedReplyInput, input);
  const row = await insertCannedReply(await getDb(), member.accountId, v);
  if (!row) throw shortcutTaken(v.shortcut);
  return row;
}

export async function updateCannedReply(member: Member, input: unknown): Promise<CannedReply> {
  requireRole(member, 'records.read');
  const { id } = validate(CannedReplyId, { id: (input as { id?: unknown } | null)?.id });
  const v = validate(CannedReplyInput, input);
  const row = await updateCannedReplyRow(await getDb(), member.accountId, id, v);
  if (row === 'missing') throw new AppError('not_found', `No canned reply with id ${id}.`);
  if (row === 'taken') throw shortcutTaken(v.shortcut);
  return row;
}

export async function deleteCannedReply(member: Member, input: unknown): Promise<{ deleted: true }> {
  requireRole(member, 'records.read');
  const { id } = validate(CannedReplyId, input);
  if (!(await deleteCannedReplyRow(await getDb(), member.accountId, id))) throw new AppError('not_found', `No canned reply with id ${id}.`);
  return { deleted: true };
}
