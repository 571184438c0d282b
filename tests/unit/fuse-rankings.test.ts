/** Reciprocal rank fusion of the BM25 and embedding rankings (lib/answers/embeddings.ts), as tables. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fuseRankings, type SimilarPassage } from '../../lib/answers/embeddings';
import type { RankedPassage } from '../../lib/knowledge/ranking';

const base = (id: string) => ({ document_id: 'd', title: 'T', filename: 't.md', visitor_file: false, ordinal: Number(id.slice(1)), content: id, context: '' });
const lexical = (...ids: string[]): RankedPassage[] =>
  ids.map((id, i) => ({
    ...base(id),
    score: 10 - i,
    relevance: 0.5,
    matched: 2,
    asked: 3,
    evidence: [{ lexeme: 'w', share: 0.5, topical: false }],
    names: [],
  }));
const semantic = (...ids: string[]): SimilarPassage[] => ids.map((id, i) => ({ ...base(id), similarity: 0.9 - i / 10 }));

const CASES: Array<[string, RankedPassage[], SimilarPassage[], string[]]> = [
  ['no embeddings: the BM25 order', lexical('p1', 'p2', 'p3'), [], ['p1', 'p2', 'p3']],
  ['both agree', lexical('p1', 'p2'), semantic('p1', 'p2'), ['p1', 'p2']],
  ['second in both beats first in one only', lexical('p1', 'p2'), semantic('p2', 'p3'), ['p2', 'p1', 'p3']],
  ['a tie keeps the BM25 order', lexical('p1', 'p2'), semantic('p2', 'p1'), ['p1', 'p2']],
  ['only the embeddings found it: after the BM25 ones it ties with', lexical('p1'), semantic('p9'), ['p1', 'p9']],
];

describe('fuseRankings', () => {
  for (const [name, lex, sem, want] of CASES) {
    it(name, () => {
      assert.deepEqual(
        fuseRankings(lex, sem).map((p) => p.content),
        want,
      );
    });
  }

  it('a passage found by meaning alone carries no lexical evidence, so the relevance floor never uses it alone', () => {
    const [, only] = fuseRankings(lexical('p1'), semantic('p9'));
    assert.deepEqual(
      { score: only!.score, relevance: only!.relevance, matched: only!.matched, evidence: only!.evidence },
      { score: 0, relevance: 0, matched: 0, evidence: [] },
    );
  });
});
