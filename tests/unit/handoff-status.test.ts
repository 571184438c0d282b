/** lib/conversations/status.ts: the one transition table, every (action, from) pair allowed or refused. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ACTIONS, type Action, type Actor, type Phase, PHASES, type StateOf, transition } from '../../lib/conversations/status';

const ME = 1;
const OTHER = 2;
const FROM: Record<Phase, StateOf> = {
  open_ai: { status: 'Open', handled_by: 'ai', assignee_id: null, waiting: false, csat: null },
  open_human: { status: 'Open', handled_by: 'human', assignee_id: null, waiting: false, csat: null },
  waiting: { status: 'Waiting', handled_by: 'human', assignee_id: null, waiting: true, csat: null },
  snoozed: { status: 'Snoozed', handled_by: 'ai', assignee_id: null, waiting: false, csat: null },
  closed: { status: 'Resolved', handled_by: 'ai', assignee_id: null, waiting: false, csat: null },
};

/** An outcome in a word: the new status·handled_by (+ flags), `unchanged`, or `refused:<code>`. */
function show(action: Action, from: StateOf, actor: Actor = { member_id: ME, target_id: OTHER }): string {
  const o = transition(action, from, actor);
  if (o.kind !== 'change') return o.kind === 'refused' ? `refused:${o.code}` : 'unchanged';
  const c = o.change;
  const who = c.assignee_id === null ? '' : c.assignee_id === ME ? '@me' : '@other';
  const flags = [
    c.waiting !== 'keep' ? `waiting:${c.waiting}` : '',
    c.handed_off ? 'handed_off' : '',
    c.replied ? 'replied' : '',
    c.took_over ? 'took_over' : '',
  ]
    .filter(Boolean)
    .join(',');
  return `${c.status}·${c.handled_by}${who}${flags ? ` ${flags}` : ''}`;
}

// Rows: actions; columns: open_ai, open_human, waiting, snoozed, closed (Resolved).
const TABLE: Record<Action, [string, string, string, string, string]> = {
  request_handoff: [
    'Waiting·human waiting:set,handed_off',
    'unchanged',
    'unchanged',
    'Waiting·human waiting:set,handed_off',
    'Waiting·human waiting:set,handed_off',
  ],
  take_over: [
    'Open·human@me waiting:clear,handed_off',
    'Open·human@me waiting:clear,handed_off',
    'Open·human@me waiting:clear,handed_off',
    'Open·human@me waiting:clear,handed_off',
    'Open·human@me waiting:clear,handed_off',
  ],
  assign: [
    'Open·human@other handed_off',
    'Open·human@other handed_off',
    'Waiting·human@other handed_off',
    'Snoozed·human@other handed_off',
    'refused:not_allowed',
  ],
  reply: [
    'Open·human@me waiting:clear,handed_off,replied,took_over',
    'Open·human@me waiting:clear,replied',
    'Open·human@me waiting:clear,replied',
    'Open·human@me waiting:clear,handed_off,replied,took_over',
    'Open·human@me waiting:clear,handed_off,replied,took_over',
  ],
  note: ['unchanged', 'unchanged', 'unchanged', 'unchanged', 'unchanged'],
  hand_back: ['refused:not_allowed', 'Open·ai waiting:clear', 'Open·ai waiting:clear', 'refused:not_allowed', 'refused:not_allowed'],
  resolve: ['Resolved·ai waiting:clear', 'Resolved·human waiting:clear', 'Resolved·human waiting:clear', 'Resolved·ai waiting:clear', 'refused:not_allowed'],
  snooze: ['Snoozed·ai', 'Snoozed·human', 'Snoozed·human', 'refused:not_allowed', 'refused:not_allowed'],
  wake: ['refused:not_allowed', 'refused:not_allowed', 'refused:not_allowed', 'Open·ai', 'refused:not_allowed'],
  visitor_message: ['unchanged', 'unchanged', 'unchanged', 'Open·ai', 'Open·ai'],
  rate: ['refused:not_allowed', 'refused:not_allowed', 'refused:not_allowed', 'refused:not_allowed', 'unchanged'],
};

it('every action from every phase does what the table says', () => {
  const got: Record<string, string[]> = {};
  for (const action of ACTIONS) got[action] = PHASES.map((p) => show(action, FROM[p]));
  assert.deepEqual(got, TABLE);
});

it('take_over: a conversation another member holds (Open·human or Waiting) is refused naming the taker; elsewhere it is taken', () => {
  const held = (p: Phase) => ({ ...FROM[p], handled_by: p === 'open_ai' ? ('ai' as const) : ('human' as const), assignee_id: OTHER });
  assert.deepEqual(
    PHASES.map((p) => show('take_over', held(p))),
    [
      'Open·human@me waiting:clear,handed_off',
      'refused:taken_by_other',
      'refused:taken_by_other',
      'Open·human@me waiting:clear,handed_off',
      'Open·human@me waiting:clear,handed_off',
    ],
  );
  assert.equal(show('take_over', { ...FROM.open_human, assignee_id: ME }), 'Open·human@me waiting:clear,handed_off');
});

const CASES: Array<[string, Action, StateOf, Actor, string]> = [
  [
    'reply keeps the assignee of a held conversation',
    'reply',
    { ...FROM.open_human, assignee_id: OTHER },
    { member_id: ME },
    'Open·human@other waiting:clear,replied',
  ],
  ['wake: a person asked and not replied → Waiting', 'wake', { ...FROM.snoozed, handled_by: 'human', waiting: true }, { member_id: null }, 'Waiting·human'],
  ['wake: a person replied → Open', 'wake', { ...FROM.snoozed, handled_by: 'human', assignee_id: ME }, { member_id: null }, 'Open·human@me'],
  [
    'a visitor message to a snoozed waiting conversation',
    'visitor_message',
    { ...FROM.snoozed, handled_by: 'human', waiting: true },
    { member_id: null },
    'Waiting·human',
  ],
  [
    'a visitor message reopens a resolved human conversation as Waiting',
    'visitor_message',
    { ...FROM.closed, handled_by: 'human', assignee_id: ME },
    { member_id: null },
    'Waiting·human@me waiting:set',
  ],
  ['an imported status counts as closed', 'visitor_message', { ...FROM.closed, status: 'Closed' }, { member_id: null }, 'Open·ai'],
  ['an imported status can be rated', 'rate', { ...FROM.closed, status: 'Pending' }, { member_id: null }, 'unchanged'],
  ['a second rating is refused', 'rate', { ...FROM.closed, csat: 4 }, { member_id: null }, 'refused:already_rated'],
  ['take_over needs a member', 'take_over', FROM.waiting, { member_id: null }, 'refused:not_allowed'],
  ['reply needs a member', 'reply', FROM.waiting, { member_id: null }, 'refused:not_allowed'],
  ['assign needs a target', 'assign', FROM.waiting, { member_id: ME }, 'refused:not_allowed'],
  ['resolve an imported Closed is refused', 'resolve', { ...FROM.closed, status: 'Closed' }, { member_id: ME }, 'refused:not_allowed'],
];

for (const [name, action, from, actor, want] of CASES) {
  it(name, () => assert.equal(show(action, from, actor), want));
}
