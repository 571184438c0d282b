/** lib/conversations/handoff-phrases.ts: a visitor asking for a person in words, both ways. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { asksForPerson } from '../../lib/conversations/handoff-phrases';

const ASKS = [
  'Can I speak to a human?',
  'can i talk to someone',
  'I want to talk to a real person',
  'I need a human',
  'Let me speak with an agent please',
  'human',
  'Human!',
  'agent',
  'operator please',
  'Representative',
  'Please connect me to a live agent',
  'Transfer me to customer service',
  'Can I have a person?',
  'get me a human now',
  'I would like to chat with somebody from your team',
  'Is there a real person I can talk to?',
  'This bot is useless. I want a human.',
  'talk to support team',
  'could I speak to your staff?',
  'I need someone to talk to about my order',
  'Can you put me through to an operator',
  'I’d like to speak to a person, thanks',
  'connect me with customer support',
  'hello, can I talk to anyone?',
  'need a real human asap',
  'let me talk to a human being',
  'Get me an agent!!!',
  'speak to representative',
];

const NOT = [
  'is a human needed to assemble the kettle?',
  'how many people work there?',
  'Does the agent app support Windows?',
  'How do I get the agent app?',
  'I need someone to install the dishwasher',
  'What does your support team do on weekends?',
  'Do I need a person to sign for the delivery?',
  'Is the kettle safe for humans?',
  'The agent field in the form is empty',
  'Who is the human resources contact for invoices?',
  'How much does shipping cost?',
  'What is a human-readable id?',
  'My team wants to get more seats',
  'Can anyone use the coupon?',
  'Do you need anyone to sign?',
  'I talked to my manager about the price',
  'speak',
  '',
];

it('a request for a person matches, whatever the wording', () => {
  const missed = ASKS.filter((t) => !asksForPerson(t));
  assert.deepEqual(missed, []);
});

it('questions about people, and ordinary questions, do not match', () => {
  const wrong = NOT.filter((t) => asksForPerson(t));
  assert.deepEqual(wrong, []);
});
