import type OpenAI from 'openai';
import { rankForQuestion, relevant, toSource } from '../answers/engine';
import { CHAT_MAX_BYTES, endpointClient, operatorClient } from '../answers/endpoint-client';
import { buildMessages } from '../answers/engines/openai';
import { requireRole } from '../auth/roles';
import type { DashboardSession } from '../auth/session';
import { effectiveBotSettings } from '../bot/settings';
import { AppError } from '../core/errors';
import { getEnv } from '../env';
import { findCuratedAnswer } from '../knowledge/curated';
import type { RankedPassage } from '../knowledge/ranking';
import { getLatestMessages } from './service';

/** The region must show within 1.5 s (docs/contracts.md §20): the model gets what is left of this. */
export const SUGGESTION_BUDGET_MS = 1_200;
/** Passages a drafted answer is grounded in at most. */
const MODEL_PASSAGES = 3;
/** A second passage joins the passages' draft only when nearly as good as the first (as the built-in engine quotes). */
const SECOND_SHARE = 0.8;
const DRAFT_MAX_CHARS = 1_500;

export type SuggestionSource = { title: string; document_id: string | null };
/**
 * A draft for the visitor's last message, never sent and never stored: `curated` (an owner's
 * curated answer, as written), `model` (the account's model, grounded in `sources`), `passages`
 * (the best passages' text), or `none` (nothing relevant, or no visitor message: `draft` null).
 */
export type SuggestedReply = {
  conversation_id: string;
  /** The visitor message the draft answers, or null when the conversation has none. */
  message_id: string | null;
  question: string | null;
  kind: 'curated' | 'model' | 'passages' | 'none';
  draft: string | null;
  sources: SuggestionSource[];
};

/**
 * A suggested reply on /inbox/<id> (docs/decisions/inbox.md "Suggested reply"): the newest message
 * whose author is the visitor, answered from the knowledge base. Tenancy: the conversation is read
 * under the member's account, another account's id is not found.
 */
export async function suggestReply(member: DashboardSession, input: { conversation_id: string }): Promise<SuggestedReply> {
  requireRole(member, 'records.read');
  const started = Date.now();
  const page = await getLatestMessages(member.accountId, input.conversation_id);
  if (!page) throw new AppError('not_found', `No conversation with id ${input.conversation_id}.`);
  const conversationId = page.conversation.id;
  const last = page.messages.findLast((m) => m.author === 'visitor' && m.content.trim());
  const none: SuggestedReply = {
    conversation_id: conversationId,
    message_id: last?.message_id ?? null,
    question: last?.content ?? null,
    kind: 'none',
    draft: null,
    sources: [],
  };
  if (!last) return none;
  const question = last.content.trim();
  const curated = await findCuratedAnswer(member.accountId, question);
  if (curated) return { ...none, kind: 'curated', draft: curated.answer, sources: [{ title: 'Curated answer', document_id: null }] };

  const settings = await effectiveBotSettings(member.accountId);
  const signal = AbortSignal.timeout(SUGGESTION_BUDGET_MS);
  const ranked = await rankForQuestion({ accountId: member.accountId, conversationId, question, signal }, [], 5, settings.endpoint, 'retry');
  const used = ranked.filter(relevant);
  if (used.length === 0) return none;
  const best = used[0]!;
  const quoted = used.slice(1, 2).filter((p) => p.score >= SECOND_SHARE * best.score);
  const passages: SuggestedReply = { ...none, kind: 'passages', draft: passagesDraft([best, ...quoted]), sources: [best, ...quoted].map(sourceOf) };

  const grounded = used.slice(0, MODEL_PASSAGES);
  const drafted = await modelDraft(member.accountId, question, grounded, settings, SUGGESTION_BUDGET_MS - (Date.now() - started));
  return drafted ? { ...none, kind: 'model', draft: drafted, sources: grounded.map(sourceOf) } : passages;
}

const sourceOf = (p: RankedPassage): SuggestionSource => ({ title: toSource(p).title, document_id: p.document_id });

/** The passages as plain text a member can send: headings as their words, long passages cut at a line. */
function passagesDraft(used: RankedPassage[]): string {
  const text = used
    .map((p) => p.content.replace(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm, '$1').trim())
    .join('\n\n')
    .trim();
  return text.length > DRAFT_MAX_CHARS ? `${text.slice(0, DRAFT_MAX_CHARS).replace(/\n[^\n]*$/, '')}\n…` : text;
}

/**
 * The account's model (its own endpoint, else the operator's LLM_BASE_URL, as answers use) drafting
 * from the passages within `remainingMs`, no retry; null without a model, on failure or when too slow
 * (the passages' draft is shown instead).
 */
async function modelDraft(
  accountId: number,
  question: string,
  used: RankedPassage[],
  settings: Awaited<ReturnType<typeof effectiveBotSettings>>,
  remainingMs: number,
): Promise<string | null> {
  const env = getEnv();
  if ((!settings.endpoint && !env.LLM_BASE_URL) || remainingMs < 100) return null;
  const limits = { maxRetries: 0, timeoutMs: remainingMs, maxBytes: CHAT_MAX_BYTES };
  try {
    const client: OpenAI = settings.endpoint ? await endpointClient(settings.endpoint, limits) : operatorClient(env.LLM_BASE_URL!, env.LLM_API_KEY, limits);
    const messages = buildMessages(question, used.map(toSource), settings.instructions, [], 0);
    const done = await client.chat.completions.create(
      { model: settings.model || env.LLM_MODEL, messages, stream: false },
      { signal: AbortSignal.timeout(remainingMs) },
    );
    const text = done.choices?.[0]?.message?.content?.trim();
    return text ? text.slice(0, DRAFT_MAX_CHARS * 4) : null;
  } catch (e) {
    console.error(`suggested reply: the model's draft was left out (account ${accountId}): ${(e as Error).message}`);
    return null;
  }
}
