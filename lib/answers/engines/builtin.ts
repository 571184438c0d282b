import { answerContext, citationTitle, considered, rankEachForQuestion, RELEVANCE_FLOOR, relevant, toSource, type Answer, type AnswerInput } from '../engine';
import type { RankedPassage } from '../../knowledge/ranking';

/**
 * Splits a finished text into small word groups. No pause between them: the service sends the
 * first group at once and coalesces the rest while that delta takes its seq, so an answer the
 * engine already holds leaves in two deltas. (Waiting an event-loop turn between groups made the
 * number of deltas follow the instance's load — 2 per answer idle, 9 busy — and each delta is a
 * seq write and a publish: the busier an instance, the more work each answer made.)
 */
export async function* streamWords(text: string, wordsPerDelta = 4): AsyncIterable<string> {
  const words = text.split(/(?<=\s)/);
  for (let i = 0; i < words.length; i += wordsPerDelta) yield words.slice(i, i + wordsPerDelta).join('');
}

/** A second passage is quoted only when it is nearly as good as the first (and relevant on its own). */
const SEE_ALSO_SHARE = 0.8;
const QUOTE_MAX_CHARS = 1200;

/** Earlier turns the built-in engine reads: a follow-up is about the last question or two. */
const FOLLOW_UP_TURNS = 2;
/** How deep a follow-up looks in both rankings (the passage it needs may rank low on its own words). */
const FOLLOW_UP_DEPTH = 20;
/** A passage of the conversation's document answers a follow-up when it covers this share of what the best passage anywhere covers. */
const TOPIC_COVERAGE = 0.9;

/**
 * The offline engine: quotes the best passage when it is relevant enough (the relevance floor),
 * and otherwise declines with the account's "no answer" text and no sources. A follow-up
 * (readsAsFollowUp) is ranked with the conversation's earlier questions (less weight), and does not
 * get the passage the last answer quoted again when another relevant one matches the new question's
 * own words better; any other question is answered as if asked alone.
 */
export async function builtinAnswer(input: AnswerInput): Promise<Answer> {
  const { settings, turns } = await answerContext(input, FOLLOW_UP_TURNS);
  const questions = turns.map((t) => t.question);
  const [ranked = [], alone = null] =
    turns.length > 0
      ? await rankEachForQuestion(input, [
          { earlierQuestions: questions, limit: FOLLOW_UP_DEPTH, verbForms: 'retry' },
          // A follow-up's own words are few: each irregular verb counts in all its forms ("lose" / "lost").
          { earlierQuestions: [], limit: FOLLOW_UP_DEPTH, verbForms: 'always' },
        ])
      : await rankEachForQuestion(input, [{ earlierQuestions: [], limit: 5, verbForms: 'retry' }]);
  const best = !alone
    ? ranked.find((p, i) => i === 0 && relevant(p))
    : readsAsFollowUp(input.question, alone)
      ? followUpChoice(ranked, alone, turns.at(-1)!.answer, POINTS_BACK.test(input.question))
      : alone.find((p, i) => i === 0 && relevant(p));
  if (!best) {
    return { sources: [], showSources: settings.showSources, deltas: streamWords(settings.noAnswerText), declined: true, considered: considered(ranked, []) };
  }
  const used: RankedPassage[] = [best];
  const second = ranked.slice(1).find((p) => p.document_id !== best.document_id || p.ordinal !== best.ordinal);
  if (second && relevant(second) && second.score >= SEE_ALSO_SHARE * best.score) used.push(second);
  const parts = settings.showSources
    ? used.map((p, i) => `${i === 0 ? 'From' : 'See also'} **${citationTitle(p)}**:\n\n${quote(p.content)}`)
    : used.map((p) => quote(p.content));
  return {
    sources: used.map(toSource),
    showSources: settings.showSources,
    deltas: streamWords(parts.join('\n\n')),
    declined: false,
    considered: considered(ranked, used),
  };
}

/** At most this many words of its own (question phrasing aside) for a question without a relevant passage to be read with the conversation. */
const FOLLOW_UP_MAX_WORDS = 3;
/** Words that point back ("it", "that", "they"; "there" but not "is there"), or a lead-in ("And …", "What about …"). */
const POINTS_BACK =
  /\b(?:it|its|that|this|these|those|they|them|their|theirs|one|ones)\b|(?<!\b(?:is|are|was|were)\s+)\bthere\b|^\s*(?:and|also|what about|how about)\b/i;

/**
 * Whether a question is read with the conversation before it. A question alone that has a relevant
 * passage is (its topic still prefers the conversation's document: followUpChoice). One without
 * is only when it points back ("Can I use it in a store too?") or is a few words of which the
 * knowledge base knows at least half ("How long is the link valid?", "When do I get my money back?"): "Is the blue kettle back in stock?" after a
 * password question names a topic of its own, and borrowing the password's words would quote
 * the password passage for it.
 */
export function readsAsFollowUp(question: string, alone: RankedPassage[]): boolean {
  if (alone.length > 0 && relevant(alone[0]!)) return true;
  if (POINTS_BACK.test(question)) return true;
  const asked = alone[0]?.asked ?? Number.POSITIVE_INFINITY;
  const known = new Set(alone.flatMap((p) => p.evidence.map((e) => e.lexeme)));
  return asked <= FOLLOW_UP_MAX_WORDS && 2 * known.size >= asked;
}

const samePassage = (a: RankedPassage, b: RankedPassage) => a.document_id === b.document_id && a.ordinal === b.ordinal;

/**
 * The passage for a follow-up. The conversation's topic is the document the last answer quoted:
 * the best passage of it (in the ranking with the conversation) that covers nearly as much of the
 * new question's own words as the best passage anywhere answers ("And how far ahead do I book it?" after "Can I rent a tent?": the
 * booking rules, not the price list again); the quoted passage itself only when it ranks first
 * so. Without such a passage, the best relevant one of the ranking with the conversation that has
 * a word of the new question; else, for a question that does not point back, its own best passage
 * when it is relevant alone ("How do returns work?" after a question about the visitor's receipt;
 * not "What if I lose it?", whose "it" is the conversation's); undefined when none is (the engine declines).
 */
export function followUpChoice(ranked: RankedPassage[], alone: RankedPassage[], lastAnswer: string, pointsBack: boolean): RankedPassage | undefined {
  const quotedBefore = (p: RankedPassage) => lastAnswer.includes(quote(p.content).slice(0, 300));
  const topic = new Set(ranked.filter(quotedBefore).map((p) => p.document_id));
  const own = (p: RankedPassage) => alone.find((a) => samePassage(a, p))?.relevance ?? 0;
  // As much of the new question as its best passage anywhere covers: a new topic leaves the old document.
  const needed = Math.max(RELEVANCE_FLOOR, TOPIC_COVERAGE * Math.max(0, ...alone.map((a) => a.relevance)));
  const inTopic = ranked.find((p) => topic.has(p.document_id) && own(p) >= needed);
  if (inTopic) return inTopic;
  const usable = ranked.filter((p) => relevant(p) && (alone.length === 0 || own(p) > 0));
  // A question about a topic of its own (it points back at nothing) is never declined because of the conversation.
  return usable.find((p) => !quotedBefore(p)) ?? usable[0] ?? (pointsBack ? undefined : alone.find((p, i) => i === 0 && relevant(p)));
}

/** A passage as a Markdown quote: its heading as a bold line, tables as lists (readable anywhere). */
export function quote(passage: string): string {
  let text = passage.length > QUOTE_MAX_CHARS ? `${passage.slice(0, QUOTE_MAX_CHARS).replace(/\n[^\n]*$/, '')}\n\n…` : passage;
  text = tablesAsLists(text).replace(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm, (_m, h: string) => `**${h.replace(/\*\*/g, '')}**`);
  return text
    .split('\n')
    .map((l) => (l ? `> ${l}` : '>'))
    .join('\n');
}

function tablesAsLists(text: string): string {
  return text.replace(/(?:^\|.*\|[ \t]*(?:\n|$))+/gm, (block) => {
    const rows = block
      .trim()
      .split('\n')
      .map((r) =>
        r
          .trim()
          .replace(/^\||\|$/g, '')
          .split('|')
          .map((c) => c.trim()),
      );
    const hasHeader = rows.length > 1 && rows[1]!.every((c) => /^:?-{2,}:?$/.test(c));
    const header = hasHeader ? rows[0]! : null;
    const body = hasHeader ? rows.slice(2) : rows;
    const items = body.map((cells) => {
      const [first, ...rest] = cells;
      const pairs = rest.map((c, i) => (header?.[i + 1] ? `${header[i + 1]}: ${c}` : c)).filter(Boolean);
      return `- **${first}**${pairs.length ? ` — ${pairs.join('; ')}` : ''}`;
    });
    return `${items.join('\n')}\n`;
  });
}
