/**
 * robots.txt (RFC 9309) for one user agent: the group naming it (else `*`), and its longest
 * matching Allow/Disallow rule (`*` and `$` patterns; Allow wins a tie). Small enough to keep
 * here rather than add a dependency (docs/decisions/knowledge-websites.md).
 *
 * Patterns are matched without RegExp (a `*` per `.*` backtracks exponentially): the pattern is
 * split on `*` and each piece is found leftmost with KMP, so one comparison costs at most
 * O(path + pattern) steps, and rules, rule values and compared paths are capped.
 */
/** `steps` adds the character comparisons spent, so a caller can budget a page's links. */
export type Robots = { isAllowed(pathAndQuery: string, steps?: { n: number }): boolean };

/** Rules kept from the chosen groups at most (real files rarely have more than a few hundred). */
export const MAX_ROBOTS_RULES = 500;
/** A rule's value at most: a longer Disallow is cut (it then refuses more), a longer Allow ignored. */
export const MAX_RULE_CHARS = 512;
/** A path and query compared at most; a longer one is refused (never crawled). */
export const MAX_PATH_CHARS = 2048;

/** One `*`-free piece of a pattern with its KMP failure table. */
type Piece = { text: string; fail: Int32Array };
export type Pattern = { pieces: Piece[]; anchored: boolean };
type Rule = { allow: boolean; pattern: Pattern; length: number };
type Line = { allow: boolean; value: string };

function piece(text: string): Piece {
  const fail = new Int32Array(text.length);
  for (let i = 1, k = 0; i < text.length; i++) {
    while (k > 0 && text[i] !== text[k]) k = fail[k - 1]!;
    if (text[i] === text[k]) k++;
    fail[i] = k;
  }
  return { text, fail };
}

/** A robots.txt path pattern: `*` any run of characters, a final `$` the end of the path. */
export function compilePattern(value: string): Pattern {
  const anchored = value.endsWith('$');
  return { pieces: (anchored ? value.slice(0, -1) : value).split('*').map(piece), anchored };
}

/** Where `p` first occurs in `s` at or after `from` (KMP), or -1; counts character comparisons in `steps`. */
function find(s: string, p: Piece, from: number, steps: { n: number }): number {
  const m = p.text.length;
  if (m === 0) return from;
  for (let i = from, k = 0; i < s.length; i++) {
    while (k > 0 && s[i] !== p.text[k]) {
      k = p.fail[k - 1]!;
      steps.n++;
    }
    steps.n++;
    if (s[i] === p.text[k]) k++;
    if (k === m) return i - m + 1;
  }
  return -1;
}

/**
 * Whether the pattern matches from the start of the path. Greedy leftmost placement of each piece
 * is enough for `*` globs; with `$` the last piece must end the path, after the ones before it.
 */
export function patternMatches(pattern: Pattern, path: string, steps = { n: 0 }): boolean {
  const { pieces, anchored } = pattern;
  const first = pieces[0]!.text;
  steps.n += first.length;
  if (!path.startsWith(first)) return false;
  if (pieces.length === 1) return !anchored || path.length === first.length;
  let at = first.length;
  const middle = anchored ? pieces.length - 1 : pieces.length;
  for (let i = 1; i < middle; i++) {
    const found = find(path, pieces[i]!, at, steps);
    if (found < 0) return false;
    at = found + pieces[i]!.text.length;
  }
  if (!anchored) return true;
  const last = pieces[pieces.length - 1]!.text;
  steps.n += last.length;
  return path.length - last.length >= at && path.endsWith(last);
}

export function parseRobots(text: string, agent: string): Robots {
  const groups: Array<{ agents: string[]; rules: Line[] }> = [];
  let current: { agents: string[]; rules: Line[] } | null = null;
  let lastWasAgent = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*/, '').trim();
    const m = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    const value = m[2]!.trim();
    if (key === 'user-agent') {
      if (!current || !lastWasAgent) {
        current = { agents: [], rules: [] };
        groups.push(current);
      }
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
    } else if ((key === 'allow' || key === 'disallow') && current) {
      lastWasAgent = false;
      const allow = key === 'allow';
      if (value && !(allow && value.length > MAX_RULE_CHARS)) current.rules.push({ allow, value: value.slice(0, MAX_RULE_CHARS) });
    } else {
      lastWasAgent = false;
    }
  }
  // RFC 9309: the product token (the user agent before "/"), compared case-insensitively.
  const token = agent.split('/')[0]!.toLowerCase();
  const mine = groups.filter((g) => g.agents.includes(token));
  const rules: Rule[] = (mine.length > 0 ? mine : groups.filter((g) => g.agents.includes('*')))
    .flatMap((g) => g.rules)
    .slice(0, MAX_ROBOTS_RULES)
    .map((r) => ({ allow: r.allow, pattern: compilePattern(r.value), length: r.value.length }));
  return {
    isAllowed(pathAndQuery: string, steps = { n: 0 }) {
      if (pathAndQuery.length > MAX_PATH_CHARS) return rules.length === 0;
      let best: Rule | null = null;
      for (const r of rules) {
        steps.n++;
        if (best && (r.length < best.length || (r.length === best.length && !r.allow))) continue;
        if (patternMatches(r.pattern, pathAndQuery, steps)) best = r;
      }
      return best ? best.allow : true;
    },
  };
}

export const ALLOW_ALL: Robots = { isAllowed: () => true };
