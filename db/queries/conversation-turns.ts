import { and, desc, eq } from 'drizzle-orm';
import type { Db } from '../client';
import { responses } from '../schema';

/** The latest `limit` answered turns of a conversation, oldest first (what a model sees as history). */
export async function listConversationTurns(db: Db, accountId: number, conversationId: string, limit: number) {
  const latest = await db
    .select({ question: responses.question, answer: responses.answer, error: responses.error })
    .from(responses)
    .where(and(eq(responses.accountId, accountId), eq(responses.conversationId, conversationId)))
    .orderBy(desc(responses.createdAt), desc(responses.id))
    .limit(limit);
  return latest.reverse();
}
