/**
 * Curated answers edited and removed from /knowledge on a real database (docs/contracts.md §15):
 * an edit replaces the question variants and the answer the bot finds; a removed entry is no longer
 * found; bad edits and unknown or another account's entries are refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeDatabase } from '../../db/client';
import { addCuratedAnswer, editCuratedAnswer, findCuratedAnswer, getCuratedAnswers, removeCuratedAnswer } from '../../lib/knowledge/curated';
import { refusalOf as refusal } from '../helpers/app-error';
import { createTestAccount } from '../helpers/builders';
import { newDataDir } from '../helpers/data-dir';

before(() => {
  if (process.env.TEST_DB === 'postgres') {
    if (!process.env.DATABASE_URL) throw new Error('TEST_DB=postgres needs DATABASE_URL');
  } else {
    delete process.env.DATABASE_URL;
    process.env.DATA_DIR = newDataDir('svc-curated-');
  }
});
after(async () => {
  await closeDatabase();
});

describe('curated answers on /knowledge', () => {
  it('an edit replaces the variants and the answer; a removed entry is not found', async () => {
    const { accountId } = await createTestAccount();
    const { id } = await addCuratedAnswer(accountId, { questions: ['Do you ship to Canada?'], answer: 'Yes, in 5 days.' });
    assert.equal((await findCuratedAnswer(accountId, 'Can you ship my order to Canada?'))?.answer, 'Yes, in 5 days.');

    await editCuratedAnswer(accountId, id, { questions: [' Do you deliver to Mexico? ', '', 'Do you deliver to Mexico?'], answer: ' Yes, in 8 days. ' });
    assert.deepEqual(
      (await getCuratedAnswers(accountId)).map((e) => ({ questions: e.questions, answer: e.answer })),
      [{ questions: ['Do you deliver to Mexico?'], answer: 'Yes, in 8 days.' }],
    );
    assert.equal((await findCuratedAnswer(accountId, 'Can you deliver my parcel to Mexico?'))?.answer, 'Yes, in 8 days.');
    assert.equal(await findCuratedAnswer(accountId, 'Can you ship my order to Canada?'), null);

    await removeCuratedAnswer(accountId, id);
    assert.equal((await getCuratedAnswers(accountId)).length, 0);
    assert.equal(await findCuratedAnswer(accountId, 'Do you deliver to Mexico?'), null);
  });

  it('refuses bad edits and entries the account does not have', async () => {
    const { accountId } = await createTestAccount();
    const other = await createTestAccount('Other');
    const { id } = await addCuratedAnswer(accountId, { questions: ['Do you ship to Canada?'], answer: 'Yes.' });
    const theirs = await addCuratedAnswer(other.accountId, { questions: ['Do you ship to Peru?'], answer: 'No.' });
    const cases: Array<[string, () => Promise<unknown>, string, RegExp]> = [
      ['no question', () => editCuratedAnswer(accountId, id, { questions: ['', '  '], answer: 'Yes.' }), 'invalid_request', /at least one question/],
      ['no answer', () => editCuratedAnswer(accountId, id, { questions: ['Q?'], answer: ' ' }), 'invalid_request', /Answer: write the answer/],
      [
        'a long question',
        () => editCuratedAnswer(accountId, id, { questions: ['x'.repeat(501)], answer: 'Yes.' }),
        'invalid_request',
        /at most 500 characters/,
      ],
      ['a long answer', () => editCuratedAnswer(accountId, id, { questions: ['Q?'], answer: 'x'.repeat(8001) }), 'invalid_request', /at most 8000 characters/],
      ['not an id', () => editCuratedAnswer(accountId, 'nope', { questions: ['Q?'], answer: 'A.' }), 'not_found', /No curated answer nope/],
      ["another account's (edit)", () => editCuratedAnswer(accountId, theirs.id, { questions: ['Q?'], answer: 'A.' }), 'not_found', /No curated answer/],
      ["another account's (remove)", () => removeCuratedAnswer(accountId, theirs.id), 'not_found', /No curated answer/],
      ['not an id (remove)', () => removeCuratedAnswer(accountId, 'nope'), 'not_found', /No curated answer nope/],
    ];
    for (const [name, p, code, message] of cases) {
      const r = await refusal(p());
      assert.equal(r.code, code, name);
      assert.match(r.message, message, name);
    }
    assert.equal((await getCuratedAnswers(other.accountId))[0]?.answer, 'No.');
    assert.equal((await getCuratedAnswers(accountId))[0]?.answer, 'Yes.');
  });
});
