/** Which next questions the built-in engine reads with the conversation (lib/answers/engines/builtin.ts readsAsFollowUp); the eval measures the effect. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readsAsFollowUp } from '../../lib/answers/engines/builtin';
import type { RankedPassage } from '../../lib/knowledge/ranking';

/** A passage of the ranking of the question alone: its asked word count and the words it contains (each an equal share). */
function ranked(asked: number, found: string[]): RankedPassage {
  return {
    document_id: '00000000-0000-4000-8000-000000000001',
    title: 'T',
    filename: 't.md',
    visitor_file: false,
    ordinal: 1,
    content: '',
    context: '',
    score: 1,
    relevance: found.length / asked,
    matched: found.length,
    asked,
    evidence: found.map((lexeme) => ({ lexeme, share: 1 / asked, topical: false })),
    names: [],
  };
}

describe('readsAsFollowUp', () => {
  const cases: Array<[string, string, RankedPassage[], boolean]> = [
    ['a relevant passage of its own', 'How do I switch on two-factor?', [ranked(2, ['two', 'factor'])], true],
    ['points back with "it"', 'What if I lose it?', [ranked(1, [])], true],
    ['points back with "that"', 'How much is that per week?', [], true],
    ['a lead-in "And"', 'And how many days in advance?', [ranked(3, ['day'])], true],
    ['"there" after a noun', 'Can I pick up my order there?', [], true],
    ['a few known words', 'How long is the link valid?', [ranked(2, ['link'])], true],
    ['half known', 'When do I get my money back?', [ranked(2, ['back'])], true],
    ['the kettle: a topic of its own', 'Is the blue kettle back in stock?', [ranked(4, ['back'])], false],
    ['nothing known', 'What is the capital of France?', [], false],
    ['existential "is there" is not pointing back', 'Is there a kettle museum in Paris?', [], false],
    ['few words, mostly unknown', 'Sell electric kettles?', [ranked(3, ['sell'])], false],
  ];
  for (const [name, question, alone, expected] of cases) {
    it(name, () => assert.equal(readsAsFollowUp(question, alone), expected));
  }
});
