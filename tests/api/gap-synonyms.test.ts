/**
 * Synonym suggestions from the content gaps on a real database (docs/decisions/synonyms.md): a gap's
 * word that the account's knowledge base (passages and curated answers) lacks is offered with a word
 * of the built-in list that the knowledge base has; a word the knowledge base has gets none; another
 * account's knowledge base is never read; adding the suggestion answers the question and removes it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { closeDatabase, getDb } from '../../db/client';
import { answerEngine } from '../../lib/answers/engines';
import { AppError } from '../../lib/core/errors';
import { listContentGaps } from '../../lib/insights/gaps';
import { addSuggestedSynonym, suggestGapSynonyms } from '../../lib/insights/synonym-suggestions';
import { addCuratedAnswer } from '../../lib/knowledge/curated';
import { addSynonymGroup } from '../../lib/knowledge/synonyms';
import { addKnowledgeDocument } from '../../lib/knowledge/service';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { newDataDir } from '../helpers/data-dir';

before(() => {
  if (process.env.TEST_DB === 'postgres') {
    if (!process.env.DATABASE_URL) throw new Error('TEST_DB=postgres needs DATABASE_URL');
  } else {
    delete process.env.DATABASE_URL;
    process.env.DATA_DIR = newDataDir('svc-gap-synonyms-');
  }
});
after(async () => {
  await closeDatabase();
});

const DAY = '2026-03-01';
const WINDOW = { from: DAY, to: DAY };
const SHOP_FAQ =
  '# Harbor Shop FAQ\n\n## Shipping\n\nShipping costs 4 euros within the EU and takes three working days.\n\n## Invoices\n\nThe invoice of every order is emailed as a PDF.\n';
/** Another account's knowledge base says "postage" and "bill", and lacks "shipping". */
const OTHER_FAQ = '# Other FAQ\n\n## Postage\n\nPostage is 3 euros. The bill comes with the parcel.\n';

/** Declined questions, one conversation each, on DAY. */
async function declined(accountId: number, questions: string[]) {
  const [ch] = (await newChannelIds(1)) as [number];
  const lines: object[] = [];
  const ids: string[] = [];
  for (const [i, question] of questions.entries()) {
    const at = `${DAY} 1${i}:00:00`;
    const conv = conversationLine({ channel_id: ch, created_at: at, updated_at: at });
    const r = responseLine(conv, { question, created_at: at });
    lines.push(conv, r);
    ids.push(r.response_id);
  }
  await importLines(accountId, lines);
  const db = await getDb();
  for (const id of ids) await db.execute(sql`UPDATE responses SET declined = true WHERE id = ${id}`);
}

async function suggestions(accountId: number) {
  const groups = await listContentGaps(accountId, WINDOW);
  const found = await suggestGapSynonyms(accountId, groups);
  return Object.fromEntries(groups.map((g, i) => [g.question, found[i]!.map((s) => `${s.word} = ${s.synonym}`)]));
}

async function ask(accountId: number, question: string) {
  const answer = await answerEngine().answer({
    accountId,
    conversationId: '00000000-0000-0000-0000-000000000000',
    question,
    signal: AbortSignal.timeout(30_000),
  });
  let text = '';
  for await (const d of answer.deltas) text += d;
  return { declined: answer.declined, text };
}

describe('synonym suggestions from the gaps', () => {
  it('offers a knowledge-base word for a missing word, nothing for a present one, from the account’s own knowledge base', { timeout: 60_000 }, async () => {
    const shop = await createTestAccount('Shop Co');
    const other = await createTestAccount('Other Co');
    await addKnowledgeDocument(shop.accountId, 'faq.md', new TextEncoder().encode(SHOP_FAQ));
    await addKnowledgeDocument(other.accountId, 'faq.md', new TextEncoder().encode(OTHER_FAQ));
    await addCuratedAnswer(shop.accountId, { questions: ['Do you sell gift cards?'], answer: 'Yes: vouchers from 10 euros.' });
    await declined(shop.accountId, [
      'How much is postage?',
      'Where is my bill?',
      'Do you ship to Canada?',
      'Can I pay with a voucher?',
      'Is the café open on Sundays?',
    ]);
    await declined(other.accountId, ['How much is shipping?', 'Where is my bill?']);

    assert.deepEqual(await suggestions(shop.accountId), {
      // "How much is postage?" is grouped with it (postage ~ shipping, its only word); "ship" is in the
      // passages, "Canada" is missing but no common synonym of it is.
      'Do you ship to Canada?': ['postage = shipping'],
      // "bill" is the other account's word, not this one's: this knowledge base says "invoice".
      'Where is my bill?': ['bill = invoice'],
      // "voucher" is in a curated answer.
      'Can I pay with a voucher?': [],
      'Is the café open on Sundays?': [],
    });
    assert.deepEqual(await suggestions(other.accountId), {
      // The shop's passages say "shipping"; this account's say "postage".
      'How much is shipping?': ['shipping = postage'],
      'Where is my bill?': [],
    });
  });

  it('"Add synonym" answers the declined question and the suggestion goes; the synonyms service validates it', { timeout: 60_000 }, async () => {
    const shop = await createTestAccount('Shop Co');
    await addKnowledgeDocument(shop.accountId, 'faq.md', new TextEncoder().encode(SHOP_FAQ));
    await declined(shop.accountId, ['How much is postage?', 'What does postage cost?']);
    assert.deepEqual(await suggestions(shop.accountId), { 'What does postage cost?': ['postage = shipping'] });
    assert.equal((await ask(shop.accountId, 'How much is postage?')).declined, true);

    assert.deepEqual((await addSuggestedSynonym(shop.accountId, { word: 'postage', synonym: 'shipping' })).words, ['postage', 'shipping']);
    assert.deepEqual(await suggestions(shop.accountId), { 'What does postage cost?': [] });
    const answered = await ask(shop.accountId, 'How much is postage?');
    assert.equal(answered.declined, false);
    assert.match(answered.text, /4 euros/);

    for (const bad of [
      { word: 'postage', synonym: 'Postage' },
      { word: 'postage', synonym: 'ship!' },
    ])
      await assert.rejects(
        () => addSuggestedSynonym(shop.accountId, bad),
        (e) => e instanceof AppError && e.code === 'invalid_request',
      );
  });

  it('groups paraphrases through synonyms and their shared rare word, not questions that share only a common one', { timeout: 60_000 }, async () => {
    const shop = await createTestAccount('Shop Co');
    const PARIS = ['Where is your shop in Paris?', 'Do you have a physical store in Paris?'];
    await declined(shop.accountId, [...PARIS, 'Where is my order?', 'Do you have a store in Lyon?', 'Do you sell gift cards?']);
    const grouped = (await listContentGaps(shop.accountId, WINDOW)).map((g) => g.questions.map((q) => q.text).sort());
    assert.deepEqual(grouped, [[...PARIS].sort(), ['Do you sell gift cards?'], ['Do you have a store in Lyon?'], ['Where is my order?']]);

    // The account's own synonyms count too: "atelier" is this account's word for a shop.
    await declined(shop.accountId, ['Is there an atelier in Paris?']);
    assert.equal((await listContentGaps(shop.accountId, WINDOW)).find((g) => g.questions.length > 1)?.questions.length, 2);
    await addSynonymGroup(shop.accountId, 'atelier, shop');
    assert.deepEqual(
      (await listContentGaps(shop.accountId, WINDOW))
        .find((g) => g.questions.length > 1)!
        .questions.map((q) => q.text)
        .sort(),
      [...PARIS, 'Is there an atelier in Paris?'].sort(),
    );
  });

  it('among several knowledge-base words for a missing one, the one found with the question’s other words', { timeout: 60_000 }, async () => {
    const shop = await createTestAccount('Shop Co');
    const faq = '# Shop FAQ\n\n## Students\n\nStudents get a 10% discount in our stores.\n\n## Gift cards\n\nGift cards can be bought online from 10 euros.\n';
    await addKnowledgeDocument(shop.accountId, 'faq.md', new TextEncoder().encode(faq));
    await declined(shop.accountId, ['Can I buy a voucher online?', 'Is there a voucher for students?']);
    const groups = await listContentGaps(shop.accountId, WINDOW);
    const found = await suggestGapSynonyms(shop.accountId, groups);
    const of = (q: string) => found[groups.findIndex((g) => g.questions.some((x) => x.text === q))]!.map((s) => `${s.word} = ${s.synonym}`);
    // "voucher" is in the list's discount group (first) and its gift-card group.
    assert.deepEqual(of('Can I buy a voucher online?'), ['voucher = gift card']);
    assert.deepEqual(of('Is there a voucher for students?'), ['voucher = discount']);
  });
});
