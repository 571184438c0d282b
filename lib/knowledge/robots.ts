/**
 * robots.txt (RFC 9309) for one user agent: the group naming it (else `*`), and its longest
 * matching Allow/Disallow rule (`*` and `$` patterns; Allow wins a tie). Small enough to keep
 * here rather than add a dependency (docs/decisions/knowledge-websites.md).
 */
export type Robots = { isAllowed(pathAndQuery: string): boolean };

type Rule = { allow: boolean; pattern: RegExp; length: number };

const toPattern = (p: string) =>
  new RegExp(
    `^${p
      .replace(/[.+?^{}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\\\$$|\$$/, '$')}`,
  );

export function parseRobots(text: string, agent: string): Robots {
  const groups: Array<{ agents: string[]; rules: Rule[] }> = [];
  let current: { agents: string[]; rules: Rule[] } | null = null;
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
      if (value) current.rules.push({ allow: key === 'allow', pattern: toPattern(value), length: value.length });
    } else {
      lastWasAgent = false;
    }
  }
  // RFC 9309: the product token (the user agent before "/"), compared case-insensitively.
  const token = agent.split('/')[0]!.toLowerCase();
  const mine = groups.filter((g) => g.agents.includes(token));
  const rules = (mine.length > 0 ? mine : groups.filter((g) => g.agents.includes('*'))).flatMap((g) => g.rules);
  return {
    isAllowed(pathAndQuery: string) {
      let best: Rule | null = null;
      for (const r of rules) {
        if (!r.pattern.test(pathAndQuery)) continue;
        if (!best || r.length > best.length || (r.length === best.length && r.allow)) best = r;
      }
      return best ? best.allow : true;
    },
  };
}

export const ALLOW_ALL: Robots = { isAllowed: () => true };
