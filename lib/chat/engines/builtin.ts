import { retrieve, type Answer, type AnswerInput } from '../engine';

const NOTHING = "I couldn't find anything about that in the knowledge base, so I can't answer it reliably. " +
  'Try rephrasing the question, or ask a person from the team.';

/** Splits text into small word groups so the widget shows it arriving. */
export async function* streamWords(text: string, wordsPerDelta = 4): AsyncIterable<string> {
  const words = text.split(/(?<=\s)/);
  for (let i = 0; i < words.length; i += wordsPerDelta) {
    yield words.slice(i, i + wordsPerDelta).join('');
    await new Promise((r) => setImmediate(r));
  }
}

/** The offline engine: composes the answer from the best matching passages, and says so when none match. */
export async function builtinAnswer(input: AnswerInput): Promise<Answer> {
  const sources = await retrieve(input);
  if (sources.length === 0) return { sources, deltas: streamWords(NOTHING) };
  const best = sources[0]!;
  const parts = [`From **${best.filename}**:\n\n${quote(best.passage)}`];
  // A second passage only when it matches nearly as well (ranks are relative to the best).
  for (const s of sources.slice(1, 2).filter((x) => (x.rank ?? 0) >= 0.5 * (best.rank ?? 0))) parts.push(`See also **${s.filename}**:\n\n${quote(s.passage)}`);
  return { sources, deltas: streamWords(parts.join('\n\n')) };
}

function quote(passage: string): string {
  const text = passage.length > 600 ? `${passage.slice(0, 600).replace(/\s+\S*$/, '')} …` : passage;
  return text.split('\n').map((l) => `> ${l}`).join('\n');
}
