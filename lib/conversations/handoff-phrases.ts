/**
 * A visitor asking for a person in words (docs/decisions/handoff.md "Phrase matcher"): a request
 * verb followed within a few words by a person noun, or a bare "human"/"agent"/"operator".
 * Questions ABOUT people ("is a human needed to assemble the kettle?") do not match: after the
 * noun may come only the end of the clause or words that keep it a request ("please", "to talk").
 */

const VERBS = new Set(['talk', 'speak', 'chat', 'connect', 'transfer', 'get', 'want', 'need', 'have', 'contact', 'reach', 'escalate', 'put']);
/** Multi-word person nouns first, so "support team" wins over a lone word. */
const NOUNS = [
  'customer service',
  'customer support',
  'support team',
  'support agent',
  'live agent',
  'live person',
  'live chat',
  'real person',
  'real human',
  'actual person',
  'actual human',
  'human being',
  'human',
  'person',
  'agent',
  'someone',
  'somebody',
  'anyone',
  'anybody',
  'operator',
  'representative',
  'rep',
  'staff',
  'people',
  'team',
];
const BARE = new Set(['human', 'agent', 'operator', 'person', 'representative', 'live agent', 'real person', 'real human', 'customer service', 'human being']);
/** Words that may sit between the verb and the noun. */
const FILLER = new Set([
  'to',
  'with',
  'me',
  'a',
  'an',
  'the',
  'some',
  'one',
  'of',
  'your',
  'you',
  'through',
  'please',
  'just',
  'real',
  'live',
  'actual',
  'i',
  'can',
  'could',
  'speak',
  'talk',
  'chat',
  'now',
  'on',
  'in',
  'touch',
]);
/** After the noun: the clause ends, or one of these keeps it a request. */
const AFTER_OK = new Set([
  'please',
  'pls',
  'plz',
  'now',
  'asap',
  'instead',
  'here',
  'there',
  'right',
  'who',
  'that',
  'i',
  'thanks',
  'thank',
  'at',
  'from',
  'on',
  'about',
  'regarding',
  'because',
  'as',
  'so',
  'for',
  'today',
  'immediately',
  'directly',
  'and',
]);
/** "<noun> to <verb>" is a request only with these verbs ("someone to talk to", not "someone to install it"). */
const TO_OK = new Set(['talk', 'speak', 'chat', 'help', 'assist', 'contact', 'call', 'answer', 'reply']);
const CLAUSE_END = /[.!?;,\n]+/;

function words(clause: string): string[] {
  return clause
    .toLowerCase()
    .replace(/[’']/g, '')
    .replace(/[^a-z0-9\s-]/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** The noun starting at `i` and its length in words, or null. */
function nounAt(ws: string[], i: number): { noun: string; len: number } | null {
  for (const n of NOUNS) {
    const parts = n.split(' ');
    if (parts.every((p, k) => ws[i + k] === p)) return { noun: n, len: parts.length };
  }
  return null;
}

function requestAfterNoun(ws: string[], j: number): boolean {
  const next = ws[j];
  if (next === undefined) return true;
  if (next === 'to') return TO_OK.has(ws[j + 1] ?? '');
  return AFTER_OK.has(next);
}

function clauseAsks(ws: string[]): boolean {
  if (ws.length === 0) return false;
  const bare = ws.filter((w) => !['a', 'an', 'please', 'pls', 'plz', 'hi', 'hello', 'hey', 'now'].includes(w)).join(' ');
  if (BARE.has(bare)) return true;
  for (let v = 0; v < ws.length; v++) {
    if (!VERBS.has(ws[v]!)) continue;
    // "people"/"team"/"anyone" only after a verb of contact, never after get/want/need ("need anyone to sign?").
    for (let i = v + 1; i < ws.length && i <= v + 5; i++) {
      const found = nounAt(ws, i);
      if (found) {
        const weak = ['people', 'team', 'anyone', 'anybody'].includes(found.noun);
        if (weak && !['talk', 'speak', 'chat', 'contact', 'reach', 'connect', 'transfer'].includes(ws[v]!)) break;
        if (requestAfterNoun(ws, i + found.len)) return true;
        break;
      }
      if (!FILLER.has(ws[i]!)) break;
    }
  }
  // "is there a real person I can talk to", "a human I could speak with"
  for (let i = 0; i < ws.length; i++) {
    const found = nounAt(ws, i);
    if (!found || ['people', 'team'].includes(found.noun)) continue;
    const rest = ws.slice(i + found.len, i + found.len + 4);
    if ((rest[0] === 'i' || rest[0] === 'you') && rest.some((w) => ['talk', 'speak', 'chat'].includes(w)) && !rest.includes('about')) return true;
  }
  return false;
}

/** True when the visitor's message asks to talk to a person. */
export function asksForPerson(text: string): boolean {
  return text.split(CLAUSE_END).some((clause) => clauseAsks(words(clause)));
}
