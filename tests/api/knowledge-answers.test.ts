/**
 * The built-in engine on a real database (PGlite or PostgreSQL): titles instead of file names,
 * only the quoted passages as sources, a relevance floor that declines with the account's "no
 * answer" text (a single shared common word is not relevance), sources hidden when the account
 * turned them off, tenancy and conversation scope, bot settings validation, and the evaluation
 * set's measured quality as a regression guard (BENCHMARKS.md has the numbers).
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_NO_ANSWER_TEXT, getBotSettings, updateBotSettings } from '../../lib/bot/settings';
import type { Answer } from '../../lib/answers/engine';
import { answerEngine } from '../../lib/answers/engines';
import { tryQuestion } from '../../lib/dashboard/knowledge';
import { addKnowledgeDocument, listKnowledge } from '../../lib/knowledge/service';
import { addedGoalsMet, evaluateAnswers, GOALS } from '../eval/run';
import { createTestAccount } from '../helpers/builders';
import { addKnowledge, backendToken, connectVisitor, createTestWidgetClient } from '../helpers/widget';
import { startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
before(
  async () => {
    server = await startTestServer();
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

const NO_CONVERSATION = '00000000-0000-0000-0000-000000000000';

async function ask(accountId: number, question: string, conversationId = NO_CONVERSATION): Promise<Answer & { text: string }> {
  const answer = await answerEngine().answer({ accountId, conversationId, question, signal: AbortSignal.timeout(30_000) });
  let text = '';
  for await (const d of answer.deltas) text += d;
  return { ...answer, text };
}

const FAQ = `# Acme help centre

## Refunds

We refund every order within 14 days of receiving the returned parcel, to the card you paid with.

## Privacy

We never sell your personal data to anyone. Your order history stays with us.

## Opening hours

Our support desk answers from Monday to Friday, 9:00 to 17:00.
`;

async function accountWithFaq() {
  const acct = await createTestAccount();
  const doc = await addKnowledgeDocument(acct.accountId, 'acme-faq-v3.md', Buffer.from(FAQ));
  return { acct, doc };
}

describe('built-in answers', () => {
  it('a document is titled by its first heading; the answer and its one source carry the title, never the file name', async () => {
    const { acct, doc } = await accountWithFaq();
    assert.equal(doc.title, 'Acme help centre');
    const [listed] = await listKnowledge(acct.accountId);
    assert.equal(listed!.title, 'Acme help centre');
    const a = await ask(acct.accountId, 'How long does a refund take?');
    assert.equal(a.declined, false);
    assert.deepEqual(
      a.sources.map((s) => Object.keys(s).sort()),
      [['document_id', 'passage', 'title']],
    );
    assert.deepEqual(
      a.sources.map((s) => s.title),
      ['Acme help centre'],
      'only the passage quoted',
    );
    assert.ok(a.sources[0]!.passage.startsWith('## Refunds\n\nWe refund'), a.sources[0]!.passage);
    assert.ok(a.text.includes('**Acme help centre**') && !a.text.includes('acme-faq-v3'), a.text);
    assert.ok(a.text.includes('> **Refunds**\n>\n> We refund every order'), `the heading is a line of its own above its text: ${a.text}`);
    assert.equal(a.considered[0]!.rank, 1);
    assert.equal(a.considered[0]!.used, true);
  });

  const UNRELATED = [
    'How do I sell my car?', // "sell" is in the privacy passage: one common word is not relevance
    'What is the capital of Australia?',
    'Can you recommend a pizza recipe?',
    'Which stocks should I buy?',
  ];
  for (const q of UNRELATED) {
    it(`declines "${q}" with the default "no answer" text and no sources`, async () => {
      const { acct } = await accountWithFaq();
      const a = await ask(acct.accountId, q);
      assert.equal(a.declined, true);
      assert.deepEqual(a.sources, []);
      assert.equal(a.text, DEFAULT_NO_ANSWER_TEXT);
      assert.ok(!a.text.includes('never sell'));
    });
  }

  it('a name the question writes that the passage lacks, or one word the passage names only in passing, is not relevance', async () => {
    const { acct } = await accountWithFaq();
    const asked = async (q: string) => (await ask(acct.accountId, q)).declined;
    assert.equal(await asked('Do you refund every order within 14 days?'), false);
    assert.equal(await asked('Does Zalando refund every order within 14 days?'), true, 'another company named');
    assert.equal(await asked('Hi Maria, do you refund every order within 14 days?'), false, 'a greeting names no topic');
    assert.equal(await asked('Refunds?'), false, 'one word, the passage is about it');
    assert.equal(await asked('Tell me some history'), true, 'one word the privacy passage names once');
  });

  it('declines with the account\'s own "no answer" text; hides sources when the account turned them off', async () => {
    const { acct } = await accountWithFaq();
    await updateBotSettings(CLI, acct.accountId, { instructions: '', noAnswerText: 'Please email help@acme.example.', model: '', showSources: false });
    assert.equal((await ask(acct.accountId, 'How do I sell my car?')).text, 'Please email help@acme.example.');
    const a = await ask(acct.accountId, 'When is the support desk open on Friday?');
    assert.equal(a.declined, false);
    assert.equal(a.showSources, false);
    assert.deepEqual(
      a.sources.map((s) => s.title),
      ['Acme help centre'],
      "kept for the stored response (the account's record)",
    );
    assert.deepEqual((await tryQuestion(acct.accountId, 'When is the support desk open on Friday?')).sources, [], 'what visitors would get');
    assert.ok(a.text.includes('Monday to Friday') && !a.text.includes('Acme help centre'), a.text);
    assert.equal(a.considered.find((c) => c.used)?.title, 'Acme help centre', 'the dashboard still sees what was used');
  });

  it("never answers from another account's documents, nor from a document uploaded in another conversation", async () => {
    const { acct } = await accountWithFaq();
    const other = await createTestAccount('Other');
    await addKnowledgeDocument(other.accountId, 'mars.md', Buffer.from('# Mars\n\nYou can pay with seashells at the Olympus Mons branch.\n'));
    assert.equal((await ask(acct.accountId, 'Can I pay with seashells at Olympus Mons?')).declined, true);
    assert.equal((await ask(other.accountId, 'Can I pay with seashells at Olympus Mons?')).sources[0]?.title, 'Mars');
  });

  it('"Try a question" reports the ranking, the rank of each passage, and whether it declined', async () => {
    const { acct } = await accountWithFaq();
    const answered = await tryQuestion(acct.accountId, 'When does the support desk answer?');
    assert.equal(answered.declined, false);
    assert.equal(answered.considered[0]!.rank, 1);
    assert.ok(answered.considered[0]!.passage.includes('Monday to Friday'));
    const declined = await tryQuestion(acct.accountId, 'How do I sell my car?');
    assert.equal(declined.declined, true);
    assert.deepEqual(declined.sources, []);
    assert.ok(declined.considered.every((c) => !c.used));
  });
});

const BAKERY = `# Bluebird Bakery FAQ

## Birthday cakes

We bake birthday cakes in three sizes: small (serves 6) for 25 euros, medium (serves 12) for 40 euros
and large (serves 20) for 60 euros. Choose sponge or chocolate, with your message piped on top.

## Ordering cakes

Order birthday and celebration cakes at least three days in advance, in the shop or on our website.
Wedding cakes need four weeks' notice.

## Delivery

We deliver cakes within the city for 5 euros. Collection from the shop is free.
`;

describe('irregular verbs (docs/decisions/model-per-account.md)', () => {
  it('a declined question gets a second try with the forms of its verbs; a form that is question phrasing is not evidence', async () => {
    const acct = await createTestAccount();
    await addKnowledge(
      acct.accountId,
      'cards.md',
      '# Help\n\n## Lost cards\n\nA lost gift card can be blocked by our team.\n\n## Problems\n\nLet us know if there is an issue with your parcel.\n',
    );
    const lose = await ask(acct.accountId, 'What should I do if I lose it?');
    assert.equal(lose.declined, false, lose.text);
    assert.ok(lose.sources[0]!.passage.startsWith('## Lost cards'), lose.sources[0]!.passage);
    // "known" is a form of "know", which the ranking drops as phrasing: "let us know" is no evidence.
    const known = await ask(acct.accountId, 'Is this a known issue?');
    assert.equal(known.declined, true, known.text);
  });
});

describe('follow-ups in a widget conversation (issue 28 item 5)', () => {
  it('"And how many days in advance do I have to order it?" after birthday cakes gets the ordering passage, not the cakes passage again', async (t) => {
    const acct = await createTestAccount();
    await addKnowledge(acct.accountId, 'bakery-faq.md', BAKERY);
    const client = await createTestWidgetClient(acct.accountId, ['example.com']);
    const visitor = await connectVisitor(server.url, (await backendToken(server.url, client)).access_token, 'https://example.com');
    t.after(() => visitor.close());
    type Done = { type: string; answer: string; sources: Array<{ passage: string }> };
    const first = await visitor.ok<{ conversation_id: string; response_id: string }>('ask', {
      client_message_id: 'cake-1',
      text: 'Do you make birthday cakes?',
    });
    const one = (await visitor.finished(first.response_id)) as unknown as Done;
    assert.ok(one.sources[0]?.passage.startsWith('## Birthday cakes'), JSON.stringify(one));
    const next = await visitor.ok<{ response_id: string }>('ask', {
      conversation_id: first.conversation_id,
      client_message_id: 'cake-2',
      text: 'And how many days in advance do I have to order it?',
    });
    const two = (await visitor.finished(next.response_id)) as unknown as Done;
    assert.equal(two.type, 'answer.done', JSON.stringify(two));
    assert.ok(two.sources[0]?.passage.startsWith('## Ordering cakes'), JSON.stringify(two.sources));
    assert.ok(two.answer.includes('three days in advance'), two.answer);
    assert.ok(!two.answer.includes('three sizes'), `not the first answer's passage again: ${two.answer}`);
  });
});

describe('bot settings', () => {
  it('defaults, round trip, and precise errors for bad values', async () => {
    const acct = await createTestAccount();
    assert.deepEqual(await getBotSettings(acct.accountId), { instructions: '', noAnswerText: '', model: '', showSources: true });
    const saved = { instructions: 'Be brief.', noAnswerText: 'Ask a human.', model: 'gpt-4o-mini', showSources: false };
    await updateBotSettings(CLI, acct.accountId, saved);
    assert.deepEqual(await getBotSettings(acct.accountId), saved);
    const BAD: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...saved, instructions: 'x'.repeat(4001) }, /instructions: must be at most 4000/],
      [{ ...saved, noAnswerText: 'x'.repeat(1001) }, /no_answer_text: must be at most 1000/],
      [{ ...saved, model: 'gpt 4; drop table' }, /model: letters, digits/],
      [{ ...saved, showSources: 'yes' }, /show_sources/],
    ];
    for (const [input, message] of BAD) {
      await assert.rejects(updateBotSettings(CLI, acct.accountId, input), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'invalid_request');
        assert.match(e.message, message);
        return true;
      });
    }
    await assert.rejects(updateBotSettings(CLI, 2_000_000_000, saved), /No account/);
  });
});

describe('the evaluation set (regression guard; BENCHMARKS.md has the measured numbers)', () => {
  it('holds the measured figures on the original and the held-out questions', { timeout: 180_000 }, async () => {
    const r = await evaluateAnswers(null, { harder: true });
    const why = r.misses.join('\n');
    // Original questions (the ones tuned on): every off-topic one declined; wrong declines 6 of 56
    // (10.7 %: one-word matches a lexical engine cannot tell from "How do I sell my car?").
    assert.ok(r.original.recallAt1 >= 0.9, `original recall@1 ${r.original.recallAt1}`);
    assert.ok(r.original.recallAt3 >= 0.95, `original recall@3 ${r.original.recallAt3}`);
    assert.equal(r.original.offTopicAnswered, 0, why);
    assert.ok(r.original.wronglyDeclined <= 6 / 56 + 1e-9, `original wrongly declined ${r.original.wronglyDeclined}: ${why}`);
    // Held-out questions (written before the second round of tuning; the compound-noun rule of the
    // third round was written after seeing their one off-topic miss, "open a bank account").
    assert.ok(r.heldOut.recallAt1 >= 0.9, `held-out recall@1 ${r.heldOut.recallAt1}`);
    assert.equal(r.heldOut.offTopicAnswered, 0, why);
    // The whole set against the goals.
    assert.ok(r.recallAt1 >= 0.9, `recall@1 ${r.recallAt1}`);
    assert.equal(r.offTopicAnswered, 0, why);
    assert.ok(r.wronglyDeclined <= 0.1, `wrongly declined ${r.wronglyDeclined}: ${why}`);
    assert.ok(r.heldOut.wronglyDeclined <= 0.05 + 1e-9, `held-out wrongly declined ${r.heldOut.wronglyDeclined}: ${why}`);
    // Follow-ups (issue 28 item 5): 14 of 22 right and 5 declined before the conversation was used.
    const followWhy = r.followUps.misses.join('\n');
    assert.ok(r.followUps.right >= 22, `follow-ups right ${r.followUps.right} of ${r.followUps.asked}: ${followWhy}`);
    // "What if I lose it?" after buying a gift card was declined until irregular verbs ("lose" / "lost") counted.
    assert.equal(r.followUps.declined, 0, followWhy);
    assert.ok(!followWhy.includes('What if I lose it?'), followWhy);
    // Unrelated next questions (the kettle after a password question): answered as if asked alone; 10 of 12 before the rule.
    assert.equal(r.followUps.unrelated.apart, r.followUps.unrelated.asked, followWhy);
    // Synonym and curated cases: declined (or not curated) before they are added, all met after.
    assert.equal(r.added.synonyms.answeredBefore + r.added.curated.curatedBefore, 0, r.added.misses.join('\n'));
    assert.ok(addedGoalsMet(r.added), r.added.misses.join('\n'));
    // The harder sets (BENCHMARKS.md): out-of-scope requests within their goal; the typo paraphrases no worse than measured.
    const harder = r.harder!;
    const harderWhy = harder.misses.join('\n');
    assert.ok(harder.outOfScope.falseAnswerRate <= GOALS.outOfScopeFalseAnswers, `out-of-scope answered ${harder.outOfScope.answered}: ${harderWhy}`);
    assert.ok(harder.paraphrases.recallAt1 >= 44 / 56 - 1e-9, `paraphrases recall@1 ${harder.paraphrases.recallAt1}`);
    assert.ok(harder.paraphrases.wronglyDeclined <= 16 / 56 + 1e-9, `paraphrases wrongly declined ${harder.paraphrases.wronglyDeclined}: ${harderWhy}`);
  });
});
