/** BM25 ranking and the relevance rule (lib/knowledge/ranking.ts) on hand-made candidate sets, without a database. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CandidatePassage } from '../../db/queries/knowledge';
import { IRREGULAR_VERBS, otherForms } from '../../lib/knowledge/irregular-verbs';
import { isRelevant, rankCandidates, sameWord, withoutConflations, writtenNames } from '../../lib/knowledge/ranking';
import { indexVocabulary, isEnglishWord, oneEditApart, typoCorrections } from '../../lib/knowledge/typos';

let ordinal = 0;
function passage(title: string, terms: Record<string, number | [number, number]>, length = 40): CandidatePassage {
  return {
    document_id: `00000000-0000-4000-8000-${String(++ordinal).padStart(12, '0')}`,
    title,
    filename: `${title}.md`,
    visitor_file: false,
    ordinal,
    content: title,
    context: title,
    length,
    terms: Object.entries(terms).map(([lexeme, n]) => ({ lexeme, text: Array.isArray(n) ? n[0] : n, context: Array.isArray(n) ? n[1] : 0 })),
  };
}
const words = (...ws: string[]) => new Map(ws.map((w) => [w, 1]));

describe('ranking', () => {
  it('a rare word outweighs a common one', () => {
    // "order" is in every candidate; "kayak" only in one.
    const corpus = {
      passages: 30,
      avgLength: 40,
      candidates: [passage('Orders', { order: 3 }), passage('Kayaks', { order: 1, kayak: 1 }), passage('Returns', { order: 2 })],
    };
    const ranked = rankCandidates(words('order', 'kayak'), corpus);
    assert.equal(ranked[0]!.title, 'Kayaks');
    assert.ok(ranked[0]!.relevance > ranked[1]!.relevance);
  });

  it('a word in the title or headings counts more than the same word in the text', () => {
    const corpus = { passages: 10, avgLength: 40, candidates: [passage('Text', { refund: 1 }), passage('Heading', { refund: [1, 1] })] };
    assert.equal(rankCandidates(words('refund'), corpus)[0]!.title, 'Heading');
  });

  it('one shared word of a two-word question is not relevance, whatever its coverage', () => {
    const corpus = { passages: 40, avgLength: 40, candidates: [passage('Privacy', { sell: 1 })] };
    const [p] = rankCandidates(words('sell', 'car'), corpus);
    assert.equal(p!.matched, 1);
    assert.equal(p!.asked, 2);
    assert.equal(isRelevant(p!, 0), false);
    const [both] = rankCandidates(words('sell', 'gear'), { passages: 40, avgLength: 40, candidates: [passage('Buy-back', { sell: 1, gear: 2 })] });
    assert.equal(isRelevant(both!, 0.35), true);
  });

  it('a one-word question may match one word the passage is about (title, headings, or twice in its text)', () => {
    const [p] = rankCandidates(words('cookie'), { passages: 5, avgLength: 40, candidates: [passage('Cookies', { cookie: 2 })] });
    assert.equal(p!.relevance, 1);
    assert.equal(isRelevant(p!, 0.35), true);
    const [heading] = rankCandidates(words('cookie'), { passages: 5, avgLength: 40, candidates: [passage('Cookies', { cookie: [1, 1] })] });
    assert.equal(isRelevant(heading!, 0.35), true);
    // "Who invented the cookie?" against a privacy passage that names cookies once in passing.
    const [passing] = rankCandidates(words('cookie'), { passages: 5, avgLength: 40, candidates: [passage('Privacy', { cookie: 1 })] });
    assert.equal(passing!.relevance, 1);
    assert.equal(isRelevant(passing!, 0.35), false);
  });

  it('words the knowledge base lacks lower coverage only partly (they may be paraphrases)', () => {
    const corpus = { passages: 20, avgLength: 40, candidates: [passage('Shipping', { ship: 1, parcel: 1 })] };
    const known = rankCandidates(words('ship', 'parcel'), corpus)[0]!.relevance;
    const withUnknown = rankCandidates(words('ship', 'parcel', 'dispatch'), corpus)[0]!.relevance;
    assert.equal(known, 1);
    assert.ok(withUnknown < 1 && withUnknown > 0.6, String(withUnknown));
  });

  it("another form of the question's verb counts as that word: one share, one document frequency", () => {
    const corpus = {
      passages: 20,
      avgLength: 40,
      candidates: [passage('Lost cards', { lost: [1, 1], card: 1 }), passage('Cards', { card: 2 }), passage('Both', { lose: 1, lost: 1 })],
    };
    const forms = otherForms(words('lose', 'card'), [[['lose'], ['lost']]]);
    assert.deepEqual([...forms], [['lost', 'lose']]);
    const ranked = rankCandidates(words('lose', 'card'), corpus, forms);
    const lost = ranked.find((p) => p.title === 'Lost cards')!;
    assert.equal(lost.relevance, 1, 'both words of the question covered');
    assert.deepEqual(lost.evidence.map((e) => e.lexeme).sort(), ['card', 'lose']);
    assert.equal(ranked.find((p) => p.title === 'Both')!.matched, 1, 'two forms are still one word');
    assert.equal(
      rankCandidates(words('lose', 'card'), corpus).find((p) => p.title === 'Lost cards')!.relevance < 1,
      true,
      'without the forms "lost" is another word',
    );
    // A stem in two groups: each group the question's words are in counts, a later group's mapping wins (as a scan of the list would).
    const verbs = [
      [['lay'], ['laid']],
      [['lie'], ['lay'], ['lain']],
      [['sing'], ['sang']],
    ];
    assert.deepEqual([...otherForms(words('lay', 'sing'), verbs)].sort(), [
      ['laid', 'lay'],
      ['lain', 'lay'],
      ['lie', 'lay'],
      ['sang', 'sing'],
    ]);
    assert.deepEqual([...otherForms(words('lain'), verbs)].sort(), [
      ['lay', 'lain'],
      ['lie', 'lain'],
    ]);
    assert.ok(IRREGULAR_VERBS.some((v) => v.includes('lose') && v.includes('lost')));
    assert.ok(
      IRREGULAR_VERBS.every((v) => v.length >= 2 && v.every((w) => /^[a-z]+$/.test(w))),
      'each verb has another form, lower-case letters only',
    );
  });

  it('a name the question writes must be in the passage; names alone are not relevance', () => {
    const corpus = {
      passages: 30,
      avgLength: 40,
      candidates: [passage('Gift cards', { redeem: 1, gift: [2, 1], card: [2, 1] }), passage('Stores', { kiel: 1, oslo: 1, open: [1, 1] })],
    };
    // "How do I redeem an Xbox gift card?": the shop's gift cards do not answer it.
    const [xbox] = rankCandidates(words('redeem', 'xbox', 'gift', 'card'), corpus, new Map(), [['xbox']]);
    assert.equal(xbox!.title, 'Gift cards');
    assert.ok(xbox!.relevance >= 0.35, String(xbox!.relevance));
    assert.equal(isRelevant(xbox!, 0.35), false);
    const [own] = rankCandidates(words('redeem', 'gift', 'card'), corpus);
    assert.equal(isRelevant(own!, 0.35), true);
    // A name of several words is there when one of its words is ("Xbox Live gift card" / a passage naming Xbox).
    const named = rankCandidates(
      words('redeem', 'xbox', 'live', 'gift', 'card'),
      { ...corpus, candidates: [passage('Xbox', { xbox: 1, redeem: 1, gift: 1, card: 1 })] },
      new Map(),
      [['xbox', 'live']],
    );
    assert.equal(isRelevant(named[0]!, 0.35), true);
    // "Is the ferry from Kiel to Oslo on time?": the passage has the places, not what is asked.
    const [ferry] = rankCandidates(words('ferri', 'kiel', 'oslo', 'time'), corpus, new Map(), [['kiel'], ['oslo']]);
    assert.equal(ferry!.title, 'Stores');
    assert.equal(isRelevant(ferry!, 0.2), false);
    const [opening] = rankCandidates(words('kiel', 'oslo', 'open'), corpus, new Map(), [['kiel'], ['oslo']]);
    assert.equal(isRelevant(opening!, 0.35), true);
    // A question of names only ("Oslo?") may be answered by them.
    const [only] = rankCandidates(words('oslo'), { ...corpus, candidates: [passage('Oslo', { oslo: [1, 1] })] }, new Map(), [['oslo']]);
    assert.equal(isRelevant(only!, 0.35), true);
  });

  it('writtenNames: capitalized words inside a sentence that name something, not capitals that say nothing', () => {
    const asks = (w: string) =>
      !['is', 'the', 'from', 'to', 'on', 'do', 'you', 'i', 'hi', 'thanks', 'best', 'regards', 'where', 'my', 'how', 'an', 'or'].includes(w);
    const cases: Array<[string, string[][]]> = [
      ['Is the ferry from Kiel to Oslo on time?', [['kiel'], ['oslo']]],
      ['How do I redeem an Xbox Live code?', [['xbox', 'live']]],
      ['Do you sell Marks & Spencer socks?', [['marks', 'spencer']]],
      ["Do you take Visa, Amex or Diners' cards?", [['visa'], ['amex'], ['diners']]],
      ['Fix this CSS: BODY div', [['css']]],
      ['Kiel or Oslo: which store is bigger?', [['oslo']]], // a sentence's first word is no name
      ['Are you open on Sunday in May?', []], // weekdays and months
      ["I'm sure I ordered it. Where is it?", []],
      ['How Do I Return An Item?', []], // Title Case
      ['WHERE IS MY ORDER?', []],
      ['Hi Maria, where is my order?\n\nBest regards,\nAnna Berg', []], // greeting and signature
      ['Where is my order? Thanks, Maria', []],
    ];
    for (const [text, want] of cases) assert.deepEqual(writtenNames(text, asks), want, text);
  });

  it('writtenNames: a remark in brackets is an aside, not what the question asks about', () => {
    const asks = (w: string) => !['is', 'the', 'at', 'my', 'how', 'do', 'does', 'you', 'with', 'where', 'long'].includes(w);
    const cases: Array<[string, string[][]]> = [
      ['How long does the warranty last? (asked at SIGTERM)', []],
      ['Where is my order? (Order NH-48213, placed Tuesday)', []],
      ['Can I return these boots [bought in the Hamburg store] by post?', []],
      ['Do you sell Xbox cards (the digital ones)?', [['xbox']]], // a name outside the brackets still counts
      ['My parcel is late :( Do you ship with DHL?', [['dhl']]], // an unclosed bracket opens no aside
    ];
    for (const [text, want] of cases) assert.deepEqual(writtenNames(text, asks), want, text);
  });

  it('nothing to rank: no words, or no candidates', () => {
    assert.deepEqual(rankCandidates(new Map(), { passages: 3, avgLength: 10, candidates: [] }), []);
    assert.deepEqual(rankCandidates(words('x'), { passages: 0, avgLength: 0, candidates: [] }), []);
  });
});

describe('stemmer conflations are not evidence', () => {
  it('sameWord: inflections of one word are; different words with one Porter stem are not', () => {
    for (const [a, b] of [
      ['close', 'closing'],
      ['hike', 'hiking'],
      ['return', 'Returns'],
      ['receive', 'receiving'],
      ['authentication', 'authenticator'],
      ['deliveries', 'delivery'],
      ['save', 'saving'],
      ['card', 'card'],
    ]) {
      assert.equal(sameWord(a!, b!), true, `${a} / ${b}`);
    }
    for (const [a, b] of [
      ['savings', 'saved'],
      ['savings', 'saves'],
    ]) {
      assert.equal(sameWord(a!, b!), false, `${a} / ${b}`);
    }
  });

  it('a conflated word leaves the coverage and the distinct-word count, not the BM25 order', () => {
    // "What is a good return on a savings account?" against "… saved addresses … account".
    const corpus = { passages: 50, avgLength: 40, candidates: [passage('Account', { save: 1, account: [2, 2] }), passage('Returns', { return: 1 })] };
    const ranked = rankCandidates(words('return', 'save', 'account'), corpus);
    const top = ranked[0]!;
    assert.equal(top.title, 'Account');
    assert.equal(isRelevant(top, 0.35), true);
    const after = withoutConflations(top, new Set(['save']));
    assert.equal(after.matched, 1);
    assert.equal(after.score, top.score);
    assert.ok(Math.abs(after.relevance - top.evidence.find((e) => e.lexeme === 'account')!.share) < 1e-9);
    assert.equal(isRelevant(after, 0.35), false);
    assert.equal(withoutConflations(top, new Set(['other'])), top);
  });
});

describe('typo correction against the account vocabulary', () => {
  const vocabulary = indexVocabulary(
    new Map([
      ['return', 12],
      ['password', 4],
      ['account', 9],
      ['guarante', 2],
      ['card', 7],
      ['email', 3],
      ['shape', 1],
      ['ship', 6],
    ]),
  );
  const written = (pairs: Record<string, string>) => new Map(Object.entries(pairs).map(([stem, w]) => [stem, new Set([w])]));

  it('one edit apart: an insertion, a deletion, a replacement or two adjacent letters swapped; never two edits', () => {
    const table: Array<[string, string, boolean]> = [
      ['retrun', 'return', true],
      ['pasword', 'password', true],
      ['acount', 'account', true],
      ['numbr', 'number', true],
      ['gaurante', 'guarante', true],
      ['exprss', 'express', true],
      ['cart', 'card', true],
      ['return', 'return', true],
      ['rteunr', 'return', false],
      ['retunr', 'return', true],
      ['retur', 'return', true],
      ['retu', 'returns', false],
      ['abcd', 'dcba', false],
    ];
    for (const [a, b, want] of table) {
      assert.equal(oneEditApart(a, b), want, `${a} / ${b}`);
      assert.equal(oneEditApart(b, a), want, `${b} / ${a}`);
    }
  });

  it('a word no passage contains and that is not English becomes the vocabulary word one edit away', () => {
    assert.equal(typoCorrections(['rteurn'], written({ rteurn: 'rteurn' }), vocabulary).get('rteurn'), 'return');
    const fixed = typoCorrections(
      ['retrun', 'pasword', 'acount', 'gaurante'],
      written({ retrun: 'retrun', pasword: 'pasword', acount: 'acount', gaurante: 'gaurantee' }),
      vocabulary,
    );
    assert.deepEqual(Object.fromEntries(fixed), { retrun: 'return', pasword: 'password', acount: 'account', gaurante: 'guarante' });
  });

  it('real words, short words, words the vocabulary has and words with nothing near are left alone', () => {
    const fixed = typoCorrections(
      ['cart', 'gmail', 'return', 'shipe', 'zzzzzz', 'kayak'],
      written({ cart: 'cart', gmail: 'gmail', return: 'return', shipe: 'shipping', zzzzzz: 'zzzzzz', kayak: 'kayak' }),
      vocabulary,
    );
    // "gmail" is one edit from "email", but in its first letter: not looked for.
    assert.deepEqual(Object.fromEntries(fixed), {});
    assert.ok(isEnglishWord('shipping') && isEnglishWord('cities') && isEnglishWord('stopped') && !isEnglishWord('exprss') && !isEnglishWord('retrun'));
  });

  it('among several words one edit away, the one in most passages', () => {
    const fixed = typoCorrections(
      ['shipx'],
      written({ shipx: 'shipx' }),
      indexVocabulary(
        new Map([
          ['shipa', 1],
          ['shipz', 5],
          ['ships', 2],
        ]),
      ),
    );
    assert.equal(fixed.get('shipx'), 'shipz');
  });
});
