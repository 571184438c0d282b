import { getDb, type Db } from '../../db/client';
import { getConversationWithTranscript } from '../../db/queries/conversations';
import {
  listConversationUploads,
  listVisitorConversationIds,
  listVisitorFeedback,
  lockVisitorConversations,
  summarizeVisitor,
  type VisitorRef,
} from '../../db/queries/privacy';
import { validate } from '../accounts/service';
import type { AuditBy } from '../audit/contract';
import { recordAudit } from '../audit/service';
import { requireRole, type Role } from '../auth/roles';
import { apiMessagesOf, toConversationRecord } from '../conversations/service';
import { AppError } from '../core/errors';
import { type ErasureResult, VisitorInput } from './contract';
import { DELETE_BATCH, deleteConversationBatch, type InBatch } from './deletion';

type Member = { accountId: number; role: Role; by: AuditBy };

/** Conversations the export reads per query; one conversation's messages are held in memory at a time. */
const EXPORT_PAGE = 50;

function refOf(input: unknown): VisitorRef {
  const v = validate(VisitorInput, input, { visitorId: 'visitor' });
  return 'email' in v ? { email: v.email } : { visitorId: v.visitorId };
}

/** The page's textbox "Visitor email or id": with an @ it is an email, else a visitor id. */
export function visitorFromText(text: unknown): VisitorRef {
  const t = typeof text === 'string' ? text.trim() : '';
  return refOf(t.includes('@') ? { email: t } : { visitorId: t });
}

function describe(who: VisitorRef): string {
  return 'email' in who ? `email ${who.email}` : `visitor id ${who.visitorId}`;
}

/**
 * The visitor as the audit log names them (docs/contracts.md §18): a visitor id as it is (a pseudonym),
 * an email with its local part masked, so the log kept after an erasure does not hold the address.
 */
function auditTarget(who: VisitorRef): string {
  if (!('email' in who)) return `visitor id ${who.visitorId}`;
  const at = who.email.lastIndexOf('@');
  return `email ${who.email.slice(0, 1)}…${who.email.slice(at)}`;
}

function notFound(who: VisitorRef): AppError {
  return new AppError('not_found', `No conversations found for ${describe(who)}.`);
}

/** "Find": how many conversations the visitor has (0 is an answer here, not an error). */
export async function findVisitor(accountId: number, input: unknown): Promise<{ conversations: number }> {
  const { conversations } = await summarizeVisitor(await getDb(), accountId, refOf(input));
  return { conversations };
}

/**
 * Erases the visitor (docs/contracts.md §18): every conversation of theirs with everything about it,
 * in batches of one transaction each, as retention deletes (`conversation.deleted` with reason
 * `erasure`). A visitor without conversations is a not_found error: "No conversations found for …".
 */
export async function eraseVisitor(by: AuditBy, accountId: number, input: unknown, inBatch?: InBatch): Promise<ErasureResult> {
  const who = refOf(input);
  const db = await getDb();
  // Each batch's transaction records what it erased: no erasure goes unrecorded, none is recorded that did not happen.
  const recorded: InBatch = async (tx, deleted, ids) => {
    await recordAudit(tx, accountId, by, 'visitor.erased', `${auditTarget(who)}: ${deleted.conversations} conversations`);
    await inBatch?.(tx, deleted, ids);
  };
  const total: ErasureResult = { conversations: 0, responses: 0, uploads: 0 };
  for (;;) {
    const done = await deleteConversationBatch(db, accountId, (tx) => lockVisitorConversations(tx, accountId, who, DELETE_BATCH), 'erasure', recorded);
    total.conversations += done.conversations;
    total.responses += done.responses;
    total.uploads += done.uploads;
    if (done.conversations < DELETE_BATCH) break;
  }
  if (total.conversations === 0) throw notFound(who);
  return total;
}

/**
 * Everything held about the visitor as one JSON document (docs/contracts.md §18), streamed: the
 * visitor, then each conversation as the Customer API shapes it (record and messages) with its
 * ratings, comments and uploads' metadata. Checks first that there is something to export.
 */
export async function openVisitorExport(by: AuditBy, accountId: number, input: unknown): Promise<{ filename: string; chunks: AsyncIterable<string> }> {
  const who = refOf(input);
  const db = await getDb();
  const summary = await summarizeVisitor(db, accountId, who);
  if (summary.conversations === 0) throw notFound(who);
  await db.transaction(async (tx) =>
    recordAudit(tx as unknown as Db, accountId, by, 'visitor.exported', `${auditTarget(who)}: ${summary.conversations} conversations`),
  );
  const visitor = { email: 'email' in who ? who.email : (summary.emails[0] ?? null), visitor_ids: summary.visitor_ids };
  async function* chunks(): AsyncGenerator<string> {
    yield `{"visitor":${JSON.stringify(visitor)},"conversations":[`;
    let after: string | null = null;
    let first = true;
    for (;;) {
      const ids = await listVisitorConversationIds(db, accountId, who, after, EXPORT_PAGE);
      for (const id of ids) {
        const conversation = await exportedConversation(accountId, id);
        if (!conversation) continue;
        yield `${first ? '' : ','}${JSON.stringify(conversation)}`;
        first = false;
      }
      if (ids.length < EXPORT_PAGE) break;
      after = ids.at(-1)!;
    }
    yield ']}';
  }
  return { filename: `visitor-export-${accountId}.json`, chunks: chunks() };
}

async function exportedConversation(accountId: number, id: string) {
  const db = await getDb();
  const c = await getConversationWithTranscript(db, accountId, id);
  if (!c) return null;
  const [{ feedback, comments, csat_comment }, uploads] = await Promise.all([
    listVisitorFeedback(db, accountId, id),
    listConversationUploads(db, accountId, id),
  ]);
  const ratings: object[] = feedback.map((f) => ({
    kind: 'answer',
    response_id: f.response_id,
    value: f.value > 0 ? 'like' : 'dislike',
    created_at: f.created_at,
  }));
  if (c.csat !== null) ratings.push({ kind: 'conversation', value: c.csat, comment: csat_comment });
  return { ...toConversationRecord(c), messages: apiMessagesOf(c), ratings, comments, uploads };
}

/** The whole export as one value (the CLI prints it; the page downloads the stream). */
export async function exportVisitor(by: AuditBy, accountId: number, input: unknown): Promise<unknown> {
  const { chunks } = await openVisitorExport(by, accountId, input);
  let text = '';
  for await (const c of chunks) text += c;
  return JSON.parse(text);
}

/** The page's doors: the member's role first. */
export async function findVisitorAs(member: Member, text: unknown) {
  requireRole(member, 'privacy.manage');
  return findVisitor(member.accountId, visitorFromText(text));
}

export async function eraseVisitorAs(member: Member, text: unknown) {
  requireRole(member, 'privacy.manage');
  return eraseVisitor(member.by, member.accountId, visitorFromText(text));
}

export async function openVisitorExportAs(member: Member, text: unknown) {
  requireRole(member, 'privacy.manage');
  return openVisitorExport(member.by, member.accountId, visitorFromText(text));
}

/** The export as a file download, written as it is read. */
export function visitorExportResponse(e: { filename: string; chunks: AsyncIterable<string> }): Response {
  const it = e.chunks[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await it.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await it.return?.();
    },
  });
  return new Response(body, {
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Disposition': `attachment; filename="${e.filename}"`,
      'Cache-Control': 'private, no-store',
    },
  });
}
