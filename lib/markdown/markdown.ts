/**
 * Safe Markdown, the one dialect of answers and questions: the dashboard (React's createElement,
 * Grid.js's `h`) and the widget (DOM elements) render the same tree from this parser. Zero
 * dependencies and no DOM, so the widget's bundle can carry it (docs/decisions/markdown.md).
 *
 * Safety: text only ever becomes text nodes (raw HTML is shown as typed), links are kept only for
 * http, https and mailto addresses, images become links. Cost: linear in the input — every
 * "where does this end" question is answered from tables built in one pass, never by rescanning —
 * and bounded by LIMITS (nesting depths, clipped lines and table cells).
 */
export type Inline = string | { t: 'strong' | 'em' | 'del'; c: Inline[] } | { t: 'code'; text: string } | { t: 'a'; href: string; c: Inline[] } | { t: 'br' };

export type Block =
  | { t: 'p'; c: Inline[] }
  | { t: 'h'; level: number; c: Inline[] }
  | { t: 'ul' | 'ol'; items: Inline[][]; start?: number }
  | { t: 'quote'; c: Block[] }
  | { t: 'pre'; text: string }
  | { t: 'hr' }
  | { t: 'table'; head: Inline[][]; rows: Inline[][][] };

export const LIMITS = {
  /** Longer sources are clipped (answers and questions are far shorter). */
  sourceChars: 100_000,
  /** A longer line is clipped before parsing. */
  lineChars: 10_000,
  /** Quotes inside quotes; deeper ones show their remaining `>` as text. Lists do not nest. */
  quoteDepth: 8,
  /** Emphasis, strike-through and links inside each other; deeper text is shown as typed. */
  inlineDepth: 4,
  /** Table cells beyond this column join the last one; a cell's text is clipped. */
  tableColumns: 32,
  cellChars: 1_000,
  /** Elements one text may make (blocks, list items, table cells, inline spans); the rest is shown as typed. */
  elements: 500,
} as const;

/** What is left of a text's LIMITS.elements, shared by every part of its parse. */
type Budget = { left: number };

const CLIP = '…';
const clip = (s: string, max: number) => (s.length > max ? s.slice(0, max) + CLIP : s);

const SAFE_URL = /^(https?:\/\/|mailto:)/i;
// Characters that browsers drop from URLs before reading the scheme ("java\tscript:").
const URL_NOISE = /[\u0000-\u0020\u007f-\u009f]/;

/** The href to keep, or null when the address is not http(s) or mailto. */
export function safeHref(raw: string): string | null {
  const href = raw.trim();
  if (URL_NOISE.test(href)) return null;
  return SAFE_URL.test(href) ? href : null;
}

// ---- inline ---------------------------------------------------------------------------------

const SPACE = /\s/;
const WORD = /[\p{L}\p{N}_]/u;
const ESCAPABLE = '\\`*_{}[]()#+-.!~|>';
const URL_TAIL_BAD = '.,;:!?\'"*_~';

const isSpace = (s: string, i: number) => i >= 0 && i < s.length && SPACE.test(s[i]!);
const isWordAt = (s: string, i: number) => i >= 0 && i < s.length && WORD.test(String.fromCodePoint(s.codePointAt(i)!));
/** The character before i is a letter, digit or `_` (astral letters are two code units). */
const isWordBefore = (s: string, i: number) => {
  if (i <= 0) return false;
  const low = s.charCodeAt(i - 1);
  return low >= 0xdc00 && low <= 0xdfff && i >= 2 ? isWordAt(s, i - 2) : isWordAt(s, i - 1);
};

/** What can end or stop something, as a test of position i in s. */
const KINDS = {
  strongStar: (s: string, i: number) => s[i] === '*' && s[i + 1] === '*' && i > 0 && !isSpace(s, i - 1),
  strongUnder: (s: string, i: number) => s[i] === '_' && s[i + 1] === '_' && i > 0 && !isSpace(s, i - 1) && !isWordAt(s, i + 2),
  emStar: (s: string, i: number) => s[i] === '*' && i > 0 && !isSpace(s, i - 1) && s[i - 1] !== '*',
  emUnder: (s: string, i: number) => s[i] === '_' && i > 0 && !isSpace(s, i - 1) && s[i - 1] !== '_' && !isWordAt(s, i + 1),
  del: (s: string, i: number) => s[i] === '~' && s[i + 1] === '~' && i > 0 && !isSpace(s, i - 1),
  bracket: (s: string, i: number) => s[i] === ']',
  newline: (s: string, i: number) => s[i] === '\n',
  nonSpace: (s: string, i: number) => !isSpace(s, i),
  destStop: (s: string, i: number) => isSpace(s, i) || s[i] === ')' || s[i] === '>',
  quote: (s: string, i: number) => s[i] === '"',
  angleStop: (s: string, i: number) => isSpace(s, i) || s[i] === '<' || s[i] === '>',
  bareStop: (s: string, i: number) => isSpace(s, i) || s[i] === '<' || s[i] === '>' || s[i] === '(' || s[i] === ')',
};
type Kind = keyof typeof KINDS;

/**
 * "Where does this end" for one text, each answer one array read however many openers ask: per
 * kind, the first position ≥ p where it occurs (or n), built backwards in one pass on first use.
 */
class Scan {
  readonly links = new Map<number, { href: string; end: number } | null>();
  constructor(
    readonly s: string,
    readonly budget: Budget,
  ) {}
  private tables = new Map<Kind, Int32Array>();
  private urlEnds?: Int32Array;
  private runs?: { len: Map<number, number>; next: Map<number, number> };

  next(kind: Kind, p: number): number {
    let t = this.tables.get(kind);
    if (!t) {
      const { s } = this;
      const ok = KINDS[kind];
      t = new Int32Array(s.length + 2).fill(s.length);
      for (let i = s.length - 1; i >= 0; i--) t[i] = ok(s, i) ? i : t[i + 1]!;
      this.tables.set(kind, t);
    }
    return t[Math.min(p, this.s.length)]!;
  }

  /** The last position < e that may end a bare URL (or -1). */
  lastUrlChar(e: number): number {
    if (!this.urlEnds) {
      const { s } = this;
      const t = new Int32Array(s.length + 1);
      t[0] = -1;
      for (let i = 1; i <= s.length; i++) t[i] = URL_TAIL_BAD.includes(s[i - 1]!) ? t[i - 1]! : i - 1;
      this.urlEnds = t;
    }
    return this.urlEnds[e]!;
  }

  /** For a backtick run starting at p: its length, and where the next run of the same length starts. */
  backticks(p: number): { len: number; close: number | undefined } {
    if (!this.runs) {
      const { s } = this;
      const len = new Map<number, number>();
      const next = new Map<number, number>();
      const starts: number[] = [];
      for (let i = 0; i < s.length; i++) {
        if (s[i] !== '`') continue;
        let j = i;
        while (j < s.length && s[j] === '`') j++;
        starts.push(i);
        len.set(i, j - i);
        i = j - 1;
      }
      const seen = new Map<number, number>();
      for (let k = starts.length - 1; k >= 0; k--) {
        const l = len.get(starts[k]!)!;
        const following = seen.get(l);
        if (following !== undefined) next.set(starts[k]!, following);
        seen.set(l, starts[k]!);
      }
      this.runs = { len, next };
    }
    return { len: this.runs.len.get(p) ?? 1, close: this.runs.next.get(p) };
  }
}

/** `](dest "title")` after the `]` at j: the destination and where the link ends, or null. Memoised per `]`. */
function linkTail(x: Scan, j: number): { href: string; end: number } | null {
  const cached = x.links.get(j);
  if (cached !== undefined) return cached;
  const s = x.s;
  let result: { href: string; end: number } | null = null;
  if (s[j + 1] === '(') {
    let k = x.next('nonSpace', j + 2);
    if (s[k] === '<') k++;
    const stop = x.next('destStop', k);
    const href = s.slice(k, stop);
    k = s[stop] === '>' ? stop + 1 : stop;
    const afterTitle = () => {
      if (!isSpace(s, k)) return -1;
      const q = x.next('nonSpace', k);
      if (s[q] !== '"') return -1;
      const close = x.next('quote', q + 1);
      if (close >= s.length) return -1;
      const p = x.next('nonSpace', close + 1);
      return s[p] === ')' ? p + 1 : -1;
    };
    const titled = afterTitle();
    const plain = x.next('nonSpace', k);
    if (titled > 0) result = { href, end: titled };
    else if (s[plain] === ')') result = { href, end: plain + 1 };
  }
  x.links.set(j, result);
  return result;
}

/** The inline content of s[from, to): one pass; nested content is parsed once by its own call. */
function inlineRange(x: Scan, from: number, to: number, depth: number): Inline[] {
  const s = x.s;
  const out: Inline[] = [];
  if (depth > LIMITS.inlineDepth) return from < to ? [s.slice(from, to)] : [];
  let text = from;
  const add = (node: Inline) => {
    x.budget.left--;
    out.push(node);
  };
  const push = (str: string) => {
    if (!str) return;
    const prev = out[out.length - 1];
    if (typeof prev === 'string') out[out.length - 1] = prev + str;
    else out.push(str);
  };
  const flush = (p: number) => push(s.slice(text, p));
  /** A delimited span s[p+len, close) when its closer ends inside the range. */
  const span = (p: number, len: number, close: number, minInner: number, t: 'strong' | 'em' | 'del') => {
    if (close < p + len + minInner || close + len > to) return false;
    flush(p);
    add({ t, c: inlineRange(x, p + len, close, depth + 1) });
    text = close + len;
    return true;
  };
  let p = from;
  while (p < to && x.budget.left > 0) {
    const ch = s[p]!;
    const c1 = p + 1 < to ? s[p + 1] : undefined;
    if (ch === '`') {
      const { len, close } = x.backticks(p);
      if (close !== undefined && close + len <= to) {
        flush(p);
        const body = s.slice(p + len, close);
        add({ t: 'code', text: body.length >= 2 && body[0] === ' ' && body[body.length - 1] === ' ' ? body.slice(1, -1) : body });
        p = text = close + len;
      } else p += len;
      continue;
    }
    if (ch === '*' || ch === '_') {
      const star = ch === '*';
      const c2 = p + 2 < to ? s[p + 2] : undefined;
      const before = star || !isWordBefore(s, p);
      if (before && c1 === ch && c2 !== undefined && !SPACE.test(c2) && span(p, 2, x.next(star ? 'strongStar' : 'strongUnder', p + 3), 1, 'strong')) {
        p = text;
        continue;
      }
      if (before && c1 !== undefined && c1 !== ch && !SPACE.test(c1) && span(p, 1, x.next(star ? 'emStar' : 'emUnder', p + 2), 1, 'em')) {
        p = text;
        continue;
      }
      p++;
      continue;
    }
    if (ch === '~' && c1 === '~') {
      const c2 = p + 2 < to ? s[p + 2] : undefined;
      if (c2 !== undefined && !SPACE.test(c2) && span(p, 2, x.next('del', p + 3), 1, 'del')) {
        p = text;
        continue;
      }
      p++;
      continue;
    }
    if (ch === '[' || (ch === '!' && c1 === '[')) {
      const open = ch === '!' ? p + 1 : p;
      const j = x.next('bracket', open + 1);
      const tail = j < to && x.next('newline', open + 1) >= j ? linkTail(x, j) : null;
      if (tail && tail.end <= to) {
        flush(p);
        const label = s.slice(open + 1, j);
        const c: Inline[] = ch === '!' ? [label || tail.href] : label ? inlineRange(x, open + 1, j, depth + 1) : [tail.href];
        const href = safeHref(tail.href);
        if (href) add({ t: 'a', href, c });
        else
          for (const part of c)
            if (typeof part === 'string') push(part);
            else out.push(part);
        p = text = tail.end;
      } else p++;
      continue;
    }
    if (ch === '<') {
      const scheme = s.startsWith('https://', p + 1) ? 8 : s.startsWith('http://', p + 1) ? 7 : s.startsWith('mailto:', p + 1) ? 7 : 0;
      const close = scheme ? x.next('angleStop', p + 1 + scheme) : -1;
      if (scheme && close > p + 1 + scheme && close < to && s[close] === '>') {
        flush(p);
        const url = s.slice(p + 1, close);
        const href = safeHref(url);
        if (href) add({ t: 'a', href, c: [url.replace(/^mailto:/i, '')] });
        else push(url);
        p = text = close + 1;
      } else p++;
      continue;
    }
    if (ch === 'h' && (s.startsWith('https://', p) || s.startsWith('http://', p))) {
      const scheme = s[p + 4] === 's' ? 8 : 7;
      const last = x.lastUrlChar(Math.min(x.next('bareStop', p), to));
      if (last >= p + scheme + 1) {
        flush(p);
        const url = s.slice(p, last + 1);
        const href = safeHref(url);
        if (href) add({ t: 'a', href, c: [url] });
        else push(url);
        p = text = last + 1;
      } else p += scheme;
      continue;
    }
    if (ch === ' ' && c1 === ' ') {
      let q = p;
      while (q < to && s[q] === ' ') q++;
      if (q < to && s[q] === '\n') {
        flush(p);
        add({ t: 'br' });
        p = text = q + 1;
      } else p = q;
      continue;
    }
    if (ch === '\\' && c1 !== undefined) {
      if (c1 === '\n') {
        flush(p);
        add({ t: 'br' });
        p = text = p + 2;
        continue;
      }
      if (ESCAPABLE.includes(c1)) {
        flush(p);
        push(c1);
        p = text = p + 2;
        continue;
      }
    }
    p++;
  }
  flush(to);
  return out;
}

/** Text with none of these is all text (most table cells and short lines). */
const MARKUP = /[`*_~[<\\]|https?:\/\/| {2}\n/;

function parseInline(text: string, budget: Budget): Inline[] {
  if (!MARKUP.test(text) || budget.left <= 0) return text ? [text] : [];
  return inlineRange(new Scan(text, budget), 0, text.length, 1);
}

// ---- blocks ---------------------------------------------------------------------------------

const FENCE = /^\s{0,3}(```|~~~)/;
const HEADING = /^\s{0,3}(#{1,6})(?=\s|$)/;
const QUOTE = /^\s{0,3}>/;
const QUOTE_MARK = /^\s{0,3}> ?/;
const LIST = /^\s{0,3}([-*+]|(\d{1,9})[.)])\s+/;
const CONTINUATION = /^\s{2,}\S/;

function headingText(rest: string): string {
  let end = rest.length;
  while (end > 0 && SPACE.test(rest[end - 1]!)) end--;
  let hashes = end;
  while (hashes > 0 && rest[hashes - 1] === '#') hashes--;
  if (hashes < end && (hashes === 0 || SPACE.test(rest[hashes - 1]!))) end = hashes;
  return rest.slice(0, end).trim();
}

function isRule(line: string): boolean {
  if (/^\s{4}/.test(line)) return false;
  const marks = line.replace(/\s+/g, '');
  return marks.length >= 3 && '-*_'.includes(marks[0]!) && marks === marks[0]!.repeat(marks.length);
}

function splitRow(line: string): string[] {
  const cells = line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '')
    .split(/(?<!\\)\|/);
  if (cells.length > LIMITS.tableColumns) cells.splice(LIMITS.tableColumns - 1, Infinity, cells.slice(LIMITS.tableColumns - 1).join('|'));
  return cells.map((c) => clip(c.trim().replace(/\\\|/g, '|'), LIMITS.cellChars));
}

function isTableSeparator(line: string): boolean {
  const cells = line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|');
  return line.includes('-') && cells.every((c) => /^:?-+:?$/.test(c.trim()));
}

function startsBlock(line: string): boolean {
  return FENCE.test(line) || HEADING.test(line) || QUOTE.test(line) || LIST.test(line) || isRule(line);
}

function parseBlocks(lines: string[], depth: number, budget: Budget): Block[] {
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      i++;
      continue;
    }
    if (budget.left-- <= 0) {
      blocks.push({ t: 'p', c: [lines.slice(i).join('\n')] });
      break;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const code: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trimStart().startsWith(fence[1]!)) code.push(lines[i++]!);
      i++;
      blocks.push({ t: 'pre', text: code.join('\n') });
      continue;
    }
    if (isRule(line)) {
      blocks.push({ t: 'hr' });
      i++;
      continue;
    }
    const h = HEADING.exec(line);
    if (h) {
      blocks.push({ t: 'h', level: h[1]!.length, c: parseInline(headingText(line.slice(h[0].length)), budget) });
      i++;
      continue;
    }
    if (QUOTE.test(line) && depth < LIMITS.quoteDepth) {
      const quoted: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i]!)) quoted.push(lines[i++]!.replace(QUOTE_MARK, ''));
      blocks.push({ t: 'quote', c: parseBlocks(quoted, depth + 1, budget) });
      continue;
    }
    const li = LIST.exec(line);
    if (li) {
      const ordered = li[2] !== undefined;
      const items: string[][] = [];
      while (i < lines.length) {
        const m = LIST.exec(lines[i]!);
        if (m && (m[2] !== undefined) === ordered && (budget.left-- > 0 || items.length === 0)) {
          items.push([lines[i]!.slice(m[0].length)]);
          i++;
          continue;
        }
        // an indented continuation line belongs to the item above
        if (!m && CONTINUATION.test(lines[i]!) && items.length) {
          items[items.length - 1]!.push(lines[i]!.trim());
          i++;
          continue;
        }
        break;
      }
      blocks.push({
        t: ordered ? 'ol' : 'ul',
        items: items.map((it) => parseInline(it.join('\n'), budget)),
        ...(ordered && Number(li[2]) !== 1 ? { start: Number(li[2]) } : {}),
      });
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && isTableSeparator(lines[i + 1]!)) {
      const head = splitRow(line);
      i += 2;
      const rows: Inline[][][] = [];
      budget.left -= head.length;
      const headCells = head.map((c) => parseInline(c, budget));
      while (i < lines.length && lines[i]!.includes('|') && lines[i]!.trim() !== '' && budget.left > 0) {
        const cells = splitRow(lines[i++]!);
        budget.left -= head.length;
        rows.push(head.map((_, k) => parseInline(cells[k] ?? '', budget)));
      }
      blocks.push({ t: 'table', head: headCells, rows });
      continue;
    }
    // At the quote depth limit a quote's remaining `>` marks are text, like any other paragraph.
    const text: string[] = [];
    while (
      i < lines.length &&
      lines[i]!.trim() !== '' &&
      (text.length === 0 || !startsBlock(lines[i]!) || (QUOTE.test(lines[i]!) && depth >= LIMITS.quoteDepth && QUOTE.test(text[0]!)))
    )
      text.push(lines[i++]!);
    blocks.push({ t: 'p', c: parseInline(text.join('\n'), budget) });
  }
  return blocks;
}

/** Parses Markdown into blocks. Never throws; anything unrecognised is a paragraph of text. */
export function parseMarkdown(src: string): Block[] {
  const lines = clip(String(src ?? ''), LIMITS.sourceChars)
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => clip(l, LIMITS.lineChars));
  return parseBlocks(lines, 0, { left: LIMITS.elements });
}

/** The plain text of Markdown (for titles, tooltips and search): markers removed. */
export function markdownToText(src: string): string {
  const inline = (xs: Inline[]): string => xs.map((x) => (typeof x === 'string' ? x : x.t === 'br' ? ' ' : x.t === 'code' ? x.text : inline(x.c))).join('');
  const block = (b: Block): string => {
    switch (b.t) {
      case 'p':
      case 'h':
        return inline(b.c);
      case 'ul':
      case 'ol':
        return b.items.map(inline).join(' · ');
      case 'quote':
        return b.c.map(block).join(' ');
      case 'pre':
        return b.text;
      case 'hr':
        return '';
      case 'table':
        return [b.head, ...b.rows].map((r) => r.map(inline).join(' | ')).join(' · ');
    }
  };
  return parseMarkdown(src).map(block).filter(Boolean).join(' ').replace(/\s+/g, ' ').trim();
}

// ---- elements -------------------------------------------------------------------------------

/** A hyperscript function: React's createElement, preact's h (Grid.js) or the widget's DOM builder. */
export type Hyperscript<N> = (type: string, props: Record<string, unknown> | null, ...children: Array<N | string>) => N;

export type RenderOptions = {
  /** Heading levels are shifted so an answer's "#" never outranks the page's own headings. */
  headingOffset?: number;
  /** One line of inline content (table cells): blocks become spans, lists become "• a • b". */
  compact?: boolean;
  /** false: links render as their text (inside another link, e.g. a table row's title). */
  links?: boolean;
};

/** Builds elements for parsed Markdown with the given hyperscript function. */
export function renderMarkdownTree<N>(blocks: Block[], h: Hyperscript<N>, opts: RenderOptions = {}): Array<N | string> {
  const offset = opts.headingOffset ?? 2;
  const inl = (xs: Inline[]): Array<N | string> =>
    xs.map((x) => {
      if (typeof x === 'string') return x;
      switch (x.t) {
        case 'br':
          return opts.compact ? ' ' : h('br', null);
        case 'code':
          return h('code', null, x.text);
        case 'a':
          return opts.links === false
            ? h('span', null, ...inl(x.c))
            : h('a', { href: x.href, target: '_blank', rel: 'noopener noreferrer nofollow' }, ...inl(x.c));
        default:
          return h(x.t, null, ...inl(x.c));
      }
    });
  if (opts.compact) {
    const parts: Array<N | string> = [];
    const add = (b: Block) => {
      if (parts.length) parts.push(' ');
      switch (b.t) {
        case 'p':
          parts.push(...inl(b.c));
          break;
        case 'h':
          parts.push(h('strong', null, ...inl(b.c)));
          break;
        case 'ul':
        case 'ol':
          b.items.forEach((it, k) => {
            if (k) parts.push(' ');
            parts.push(`${b.t === 'ol' ? `${(b.start ?? 1) + k}.` : '•'} `, ...inl(it));
          });
          break;
        case 'quote':
          b.c.forEach(add);
          break;
        case 'pre':
          parts.push(h('code', null, b.text));
          break;
        case 'hr':
          break;
        case 'table':
          for (const r of [b.head, ...b.rows]) for (const cell of r) parts.push(...inl(cell), ' ');
          break;
      }
    };
    blocks.forEach(add);
    return parts;
  }
  const blk = (b: Block): N => {
    switch (b.t) {
      case 'p':
        return h('p', null, ...inl(b.c));
      case 'h':
        return h(`h${Math.min(6, b.level + offset)}`, null, ...inl(b.c));
      case 'ul':
        return h('ul', null, ...b.items.map((it) => h('li', null, ...inl(it))));
      case 'ol':
        return h('ol', b.start ? { start: b.start } : null, ...b.items.map((it) => h('li', null, ...inl(it))));
      case 'quote':
        return h('blockquote', null, ...b.c.map(blk));
      case 'pre':
        return h('pre', null, h('code', null, b.text));
      case 'hr':
        return h('hr', null);
      case 'table':
        return h(
          'div',
          { className: 'md-table' },
          h(
            'table',
            null,
            h('thead', null, h('tr', null, ...b.head.map((c) => h('th', { scope: 'col' }, ...inl(c))))),
            h('tbody', null, ...b.rows.map((r) => h('tr', null, ...r.map((c) => h('td', null, ...inl(c)))))),
          ),
        );
    }
  };
  return blocks.map(blk);
}
