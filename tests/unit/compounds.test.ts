import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compoundsIn, namesCompound } from '../../lib/knowledge/compounds';

test('compound nouns a question asks about come from WordNet, in order, with the head as written', () => {
  const cases: Array<[string, string[]]> = [
    ['How do I open a bank account?', ['bank account']],
    ['What is a good return on a savings account?', ['savings account']],
    ['Which credit cards do you accept?', ['credit cards']],
    ['Will I pay customs duties to Switzerland?', ['customs duties']],
    // A compound that qualifies a following noun is not the thing asked about.
    ['Do you store my credit card number?', []],
    // Not compounds: free word pairs, short modifiers, nothing at all.
    ['How do I close my account?', []],
    ['Can I get an order to a PO box?', []],
    ['', []],
  ];
  for (const [q, want] of cases) {
    assert.deepEqual(
      compoundsIn(q).map((c) => `${c.modifier} ${c.head}`),
      want,
      q,
    );
  }
});

test('a passage names a compound in singular, plural, hyphenated or closed form, whole words only', () => {
  const [bank] = compoundsIn('open a bank account');
  assert.ok(bank);
  for (const text of ['Open a bank account today', 'All BANK ACCOUNTS', 'a bank-account', 'bankaccount']) assert.equal(namesCompound(text, bank), true, text);
  for (const text of ['Closing your account', 'your bank has an account', 'bank accountant']) assert.equal(namesCompound(text, bank), false, text);
  const [duty] = compoundsIn('customs duties');
  assert.ok(duty);
  assert.equal(namesCompound('customs duty is charged', duty), true);
  assert.equal(namesCompound('Customs duties apply', duty), true);
});
