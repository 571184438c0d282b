/**
 * The ONE transition table of a conversation's handoff state (docs/decisions/handoff.md): every
 * change of `status`, `handled_by` or the assignee goes through `transition`. Pure: the service
 * (lib/conversations/handoff.ts) reads the row under its lock, asks here, and writes the answer.
 */
import type { HandledBy } from './shapes';

/** The four statuses svc sets (docs/contracts.md §14); imports may bring others, treated as closed. */
export const HANDOFF_STATUSES = ['Open', 'Waiting', 'Snoozed', 'Resolved'] as const;
export type HandoffStatus = (typeof HANDOFF_STATUSES)[number];
/** Statuses the inbox lists as active; any other is closed. */
export const ACTIVE_STATUSES = ['Open', 'Waiting', 'Snoozed'] as const;

export const ACTIONS = [
  'request_handoff',
  'take_over',
  'assign',
  'reply',
  'note',
  'hand_back',
  'resolve',
  'snooze',
  'wake',
  'visitor_message',
  'rate',
] as const;
export type Action = (typeof ACTIONS)[number];

/** Where a conversation stands for the table: Open split by who handles it; every status outside the four is `closed`. */
export type Phase = 'open_ai' | 'open_human' | 'waiting' | 'snoozed' | 'closed';
export const PHASES: readonly Phase[] = ['open_ai', 'open_human', 'waiting', 'snoozed', 'closed'];

/**
 * What the table needs of a conversation. `waiting`: waiting_since is set — a person was asked and
 * no member has replied since (a reply clears it; a snooze keeps it, so a wake knows).
 */
export type StateOf = {
  status: string;
  handled_by: HandledBy;
  assignee_id: number | null;
  waiting: boolean;
  csat: number | null;
};
/** Who acts: a member (take_over, reply, …), or the visitor / the system (no member). */
export type Actor = { member_id: number | null; target_id?: number | null };

export function phaseOf(s: Pick<StateOf, 'status' | 'handled_by'>): Phase {
  switch (s.status) {
    case 'Open':
      return s.handled_by === 'human' ? 'open_human' : 'open_ai';
    case 'Waiting':
      return 'waiting';
    case 'Snoozed':
      return 'snoozed';
    default:
      return 'closed';
  }
}

/**
 * A change to write. Timestamps are set by the writer at its `now()`: `waiting` sets, clears or
 * keeps waiting_since; `handed_off` sets handed_off_at if null; `replied`
 * sets first_reply_at if null; resolved_at is set on Resolved and cleared when the conversation
 * reopens; snoozed_until is set by `snooze` and cleared whenever the status leaves Snoozed.
 */
export type Change = {
  status: HandoffStatus;
  handled_by: HandledBy;
  /** null: nobody; a number: that member. */
  assignee_id: number | null;
  waiting: 'set' | 'clear' | 'keep';
  handed_off: boolean;
  replied: boolean;
  /** A reply to a conversation no member holds: a take-over first, in the same transaction (its own events). */
  took_over: boolean;
};

/** Why a transition is refused: a code the doors branch on (the service words the message). */
export type RefusalCode = 'taken_by_other' | 'not_allowed' | 'already_rated';
export type Outcome = { kind: 'change'; change: Change } | { kind: 'unchanged' } | { kind: 'refused'; code: RefusalCode };

const unchanged: Outcome = { kind: 'unchanged' };
const refused = (code: RefusalCode = 'not_allowed'): Outcome => ({ kind: 'refused', code });
const change = (from: StateOf, c: Partial<Change> & Pick<Change, 'status'>): Outcome => ({
  kind: 'change',
  change: { handled_by: from.handled_by, assignee_id: from.assignee_id, waiting: 'keep', handed_off: false, replied: false, took_over: false, ...c },
});

/** `wake` and a visitor's message to a snoozed conversation: Open, or Waiting when a person was asked and has not replied yet. */
function wake(from: StateOf): Outcome {
  return change(from, { status: from.handled_by === 'human' && from.waiting ? 'Waiting' : 'Open' });
}

/** The table of docs/decisions/handoff.md, row by row. */
export function transition(action: Action, from: StateOf, actor: Actor): Outcome {
  const phase = phaseOf(from);
  const me = actor.member_id;
  switch (action) {
    case 'request_handoff':
      if (phase === 'waiting' || phase === 'open_human') return unchanged;
      return change(from, { status: 'Waiting', handled_by: 'human', waiting: 'set', handed_off: true });
    case 'take_over': {
      if (me === null) return refused();
      const held = phase === 'open_human' || phase === 'waiting';
      if (held && from.assignee_id !== null && from.assignee_id !== me) return refused('taken_by_other');
      return change(from, { status: 'Open', handled_by: 'human', assignee_id: me, waiting: 'clear', handed_off: true });
    }
    case 'assign': {
      if (me === null || actor.target_id == null || phase === 'closed') return refused();
      return change(from, { status: from.status as HandoffStatus, handled_by: 'human', assignee_id: actor.target_id, handed_off: true });
    }
    case 'reply': {
      if (me === null) return refused();
      if (phase === 'open_human' || phase === 'waiting') {
        return change(from, { status: 'Open', handled_by: 'human', assignee_id: from.assignee_id ?? me, waiting: 'clear', replied: true });
      }
      return change(from, { status: 'Open', handled_by: 'human', assignee_id: me, waiting: 'clear', handed_off: true, replied: true, took_over: true });
    }
    case 'note':
      return unchanged;
    case 'hand_back':
      if (phase !== 'open_human' && phase !== 'waiting') return refused();
      return change(from, { status: 'Open', handled_by: 'ai', assignee_id: null, waiting: 'clear' });
    case 'resolve':
      if (phase === 'closed') return refused();
      return change(from, { status: 'Resolved', waiting: 'clear' });
    case 'snooze':
      if (phase === 'snoozed' || phase === 'closed') return refused();
      return change(from, { status: 'Snoozed' });
    case 'wake':
      return phase === 'snoozed' ? wake(from) : refused();
    case 'visitor_message':
      if (phase === 'snoozed') return wake(from);
      if (phase !== 'closed') return unchanged;
      if (from.handled_by === 'human') return change(from, { status: 'Waiting', waiting: 'set' });
      return change(from, { status: 'Open', assignee_id: null });
    case 'rate':
      if (phase !== 'closed') return refused();
      return from.csat === null ? unchanged : refused('already_rated');
  }
}
