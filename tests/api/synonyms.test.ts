/**
 * Synonyms per account on a real database (docs/contracts.md §15): a group's words stand for each
 * other in retrieval, so a question the bot declined ("postage") is answered once "postage,
 * shipping" is added, for that account only; removing the group undoes it; bad groups are refused
 * with a message naming the field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeDatabase } from '../../db/client';
import { answerEngine } from '../../lib/answers/engines';
import { addKnowledgeDocument, findPassages } from '../../lib/knowledge/service';
import { addSynonymGroup, getSynonymGroups, removeSynonymGroup, SYNONYM_LIMITS } from '../../lib/knowledge/synonyms';
import { refusalOf as refusal } from '../helpers/app-error';
import { createTestAccount } from '../helpers/builders';
import { newDataDir } from '../helpers/data-dir';

before(() => {
  if (process.env.TEST_DB === 'postgres') {
    if (!process.env.DATABASE_URL) throw new Error('TEST_DB=postgres needs DATABASE_URL');
  } else {
    delete process.env.DATABASE_URL;
    process.env.DATA_DIR = newDataDir('svc-synonyms-');
  }
});
after(async () => {
  await closeDatabase();
});

const NO_CONVERSATION = '00000000-0000-0000-0000-000000000000';
const FAQ =
  '# Harbor Shop FAQ\n\n## Shipping\n\nShipping costs 4 euros within the EU and takes three working days.\n\n## Returns\n\nYou can send back any unused item within 30 days for a full refund.\n';

async function ask(accountId: number, question: string) {
  const answer = await answerEngine().answer({ accountId, conversationId: NO_CONVERSATION, question, signal: AbortSignal.timeout(30_000) });
  let text = '';
  for await (const d of answer.deltas) text += d;
  return { declined: answer.declined, text };
}

describe('synonyms', () => {
  it('a declined question is answered once a synonym group is added, for that account only, until removed', { timeout: 60_000 }, async () => {
    const { accountId } = await createTestAccount();
    const other = await createTestAccount('Other Co');
    for (const id of [accountId, other.accountId]) await addKnowledgeDocument(id, 'faq.md', new TextEncoder().encode(FAQ));
    const question = 'How much is postage?';
    assert.equal((await ask(accountId, question)).declined, true);

    const group = await addSynonymGroup(accountId, ' Postage,  shipping , postage ');
    assert.deepEqual(group.words, ['postage', 'shipping']);
    const answered = await ask(accountId, question);
    assert.equal(answered.declined, false);
    assert.match(answered.text, /4 euros/);
    assert.equal((await ask(other.accountId, question)).declined, true, 'another account has no such group');

    const phrase = await addSynonymGroup(accountId, 'return, send back');
    const [best] = await findPassages(accountId, null, 'Can I return a jacket I bought?');
    assert.match(best!.content, /send back/);

    assert.deepEqual(
      (await getSynonymGroups(accountId)).map((g) => g.words),
      [
        ['postage', 'shipping'],
        ['return', 'send back'],
      ],
    );
    await removeSynonymGroup(accountId, group.id);
    await removeSynonymGroup(accountId, phrase.id);
    assert.equal((await ask(accountId, question)).declined, true);
  });

  it('refuses groups that are not 2–10 words or short phrases, and unknown groups', async () => {
    const { accountId } = await createTestAccount();
    const cases: Array<[string, string, RegExp]> = [
      ['empty', '', /at least two different words/],
      ['one word', 'postage', /at least two different words/],
      ['the same word twice', 'postage, Postage', /at least two different words/],
      ['eleven words', 'a1, b2, c3, d4, e5, f6, g7, h8, i9, j10, k11', /at most 10 words/],
      ['a sentence', 'postage, how much does shipping cost', /“how much does shipping cost” is not a word or a short phrase/],
      ['punctuation', 'postage, ship!', /“ship!” is not a word/],
      ['a word too long', `postage, ${'x'.repeat(41)}`, /40 characters/],
      ['only a stop word', 'postage, the', /“the” is too common a word/],
    ];
    for (const [name, text, message] of cases) {
      const r = await refusal(addSynonymGroup(accountId, text));
      assert.equal(r.code, 'invalid_request', name);
      assert.match(r.message, message, name);
    }
    for (const id of ['nope', '00000000-0000-0000-0000-000000000000']) assert.equal((await refusal(removeSynonymGroup(accountId, id))).code, 'not_found', id);
    const other = await createTestAccount('Other');
    const g = await addSynonymGroup(other.accountId, 'postage, shipping');
    assert.equal((await refusal(removeSynonymGroup(accountId, g.id))).code, 'not_found', "another account's group");
  });

  it(`refuses a group beyond ${SYNONYM_LIMITS.groups} per account`, { timeout: 120_000 }, async () => {
    const { accountId } = await createTestAccount();
    for (let i = 0; i < SYNONYM_LIMITS.groups; i++) await addSynonymGroup(accountId, `alpha${i}, beta${i}`);
    const r = await refusal(addSynonymGroup(accountId, 'postage, shipping'));
    assert.equal(r.code, 'invalid_request');
    assert.match(r.message, /at most 200 synonym groups per account; remove one first/);
  });
});
