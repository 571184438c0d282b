import { AppError } from '../core/errors';
import { EngineError, sourcesForVisitors } from '../answers/engine';
import { answerEngine } from '../answers/engines';
import { MAX_QUESTION_CHARS } from '../limits/text';

/**
 * Runs the account's answer engine on a question without storing anything: the answer, the sources
 * visitors would get, whether it declined, and every passage considered with its rank.
 */
export async function tryQuestion(accountId: number, question: string) {
  const q = question.trim();
  if (!q) throw new AppError('invalid_request', 'Type a question.');
  if (q.length > MAX_QUESTION_CHARS) throw new AppError('invalid_request', `Questions may have at most ${MAX_QUESTION_CHARS} characters.`);
  try {
    const answer = await answerEngine().answer({
      accountId,
      conversationId: '00000000-0000-0000-0000-000000000000',
      question: q,
      signal: AbortSignal.timeout(60_000),
    });
    let text = '';
    for await (const d of answer.deltas) text += d;
    return { answer: text, sources: sourcesForVisitors(answer.sources, answer.showSources), declined: answer.declined, considered: answer.considered };
  } catch (e) {
    if (e instanceof EngineError) throw new AppError('unavailable', e.message);
    throw e;
  }
}
