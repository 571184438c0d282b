/**
 * Safe Markdown for the dashboard, the same dialect the widget renders (lib/widget/markdown.ts):
 * parsed into a small tree of plain data, then turned into elements by a hyperscript function
 * (React's createElement in the dashboard, Grid.js's `h` in table cells). Text only ever becomes
 * text nodes: raw HTML in the source is shown as typed, never parsed, and links are kept only for
 * http, https and mailto addresses (no javascript:, data: or vbscript:), images become links.
 */
export type Inline =
  | string
  | { t: 'strong' | 'em' | 'del'; c: Inline[] }
  | { t: 'code'; text: string }
  | { t: 'a'; href: string; c: Inline[] }
  | { t: 'br' };

export type Block =
  | { t: 'p'; c: Inline[] }
  | { t: 'h'; level: number; c: Inline[] }
  | { t: 'ul' | 'ol'; items: Inline[][]; start?: number }
  | { t: 'quote'; c: Block[] }
  | { t: 'pre'; text: string }
  | { t: 'hr' }
  | { t: 'table'; head: Inline[][]; rows: Inline[][][] };

const SAFE_URL = /^(https?:\/\/|mailto:)/i;
// Characters that browsers drop from URLs before reading the scheme ("java\tscript:").
const URL_NOISE = /[\u0000-\u0020\u007f-\u009f]/g;

/** The href to keep, or null when the address is not http(s) or mailto. */
export function safeHref(raw: string): string | null {
  const href = raw.trim();
  if (href !== href.replace(URL_NOISE, '')) return null;
  return SAFE_URL.test(href) ? href : null;
}

const INLINE = new RegExp([
  /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/.source, // 1,2 code
  String.raw`\*\*(?=\S)([\s\S]*?\S)\*\*|(?<![\p{L}\p{N}_])__(?=\S)([\s\S]*?\S)__(?![\p{L}\p{N}_])`, // 3,4 strong (no intraword __)
  String.raw`\*(?=[^\s*])([\s\S]*?[^\s*])\*|(?<![\p{L}\p{N}_])_(?=[^\s_])([\s\S]*?[^\s_])_(?![\p{L}\p{N}_])`, // 5,6 em
  /~~(?=\S)([\s\S]*?\S)~~/.source, // 7 del
  /(!?)\[([^\]\n]*)\]\(\s*<?([^\s)>]*)>?(?:\s+"[^"]*")?\s*\)/.source, // 8,9,10 link / image
  /<((?:https?:\/\/|mailto:)[^\s<>]+)>/.source, // 11 <autolink>
  /(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"*_~])/.source, // 12 bare URL
  / {2,}\n|\\\n/.source, // hard line break
  /\\([\\`*_{}[\]()#+\-.!~|>])/.source, // 13 escaped punctuation
].join('|'), 'gu');

export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let last = 0;
  const push = (s: string) => { if (!s) return; const prev = out[out.length - 1]; if (typeof prev === 'string') out[out.length - 1] = prev + s; else out.push(s); };
  INLINE.lastIndex = 0;
  const re = new RegExp(INLINE.source, INLINE.flags);
  for (let m = re.exec(text); m; m = re.exec(text)) {
    push(text.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[2] !== undefined) out.push({ t: 'code', text: m[2].replace(/^ (.*) $/s, '$1') });
    else if (m[3] !== undefined || m[4] !== undefined) out.push({ t: 'strong', c: parseInline(m[3] ?? m[4]!) });
    else if (m[5] !== undefined || m[6] !== undefined) out.push({ t: 'em', c: parseInline(m[5] ?? m[6]!) });
    else if (m[7] !== undefined) out.push({ t: 'del', c: parseInline(m[7]) });
    else if (m[10] !== undefined) {
      const href = safeHref(m[10]);
      const label = m[9] || m[10];
      const c = m[8] ? [label] : parseInline(label);
      if (href) out.push({ t: 'a', href, c });
      else out.push(...c.map((x) => x));
    } else if (m[11] !== undefined || m[12] !== undefined) {
      const url = (m[11] ?? m[12])!;
      const href = safeHref(url);
      if (href) out.push({ t: 'a', href, c: [url.replace(/^mailto:/i, '')] }); else push(url);
    } else if (m[13] !== undefined) push(m[13]);
    else out.push({ t: 'br' });
  }
  push(text.slice(last));
  return out;
}

const FENCE = /^\s{0,3}(```|~~~)/;
const HEADING = /^\s{0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$/;
const QUOTE = /^\s{0,3}>/;
const LIST = /^\s{0,3}([-*+]|(\d{1,9})[.)])\s+(.*)$/;
const HR = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const TABLE_SEP = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

function splitRow(line: string): string[] {
  const cells = line.trim().replace(/^\|/, '').replace(/(?<!\\)\|$/, '').split(/(?<!\\)\|/);
  return cells.map((c) => c.trim().replace(/\\\|/g, '|'));
}

function startsBlock(line: string): boolean {
  return FENCE.test(line) || HEADING.test(line) || QUOTE.test(line) || LIST.test(line) || HR.test(line);
}

/** Parses Markdown into blocks. Never throws; anything unrecognised is a paragraph of text. */
export function parseMarkdown(src: string): Block[] {
  const lines = String(src ?? '').replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') { i++; continue; }
    const fence = FENCE.exec(line);
    if (fence) {
      const code: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trimStart().startsWith(fence[1]!)) code.push(lines[i++]!);
      i++;
      blocks.push({ t: 'pre', text: code.join('\n') });
      continue;
    }
    if (HR.test(line)) { blocks.push({ t: 'hr' }); i++; continue; }
    const h = HEADING.exec(line);
    if (h) { blocks.push({ t: 'h', level: h[1]!.length, c: parseInline(h[2] ?? '') }); i++; continue; }
    if (QUOTE.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i]!)) quoted.push(lines[i++]!.replace(/^\s{0,3}> ?/, ''));
      blocks.push({ t: 'quote', c: parseMarkdown(quoted.join('\n')) });
      continue;
    }
    const li = LIST.exec(line);
    if (li) {
      const ordered = li[2] !== undefined;
      const items: string[][] = [];
      while (i < lines.length) {
        const m = LIST.exec(lines[i]!);
        if (m && (m[2] !== undefined) === ordered) { items.push([m[3]!]); i++; continue; }
        // an indented continuation line belongs to the item above
        if (!m && /^\s{2,}\S/.test(lines[i]!) && items.length) { items[items.length - 1]!.push(lines[i]!.trim()); i++; continue; }
        break;
      }
      blocks.push({ t: ordered ? 'ol' : 'ul', items: items.map((it) => parseInline(it.join('\n'))), ...(ordered && Number(li[2]) !== 1 ? { start: Number(li[2]) } : {}) });
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]!) && lines[i + 1]!.includes('-')) {
      const head = splitRow(line);
      i += 2;
      const rows: Inline[][][] = [];
      while (i < lines.length && lines[i]!.includes('|') && lines[i]!.trim() !== '') {
        const cells = splitRow(lines[i++]!);
        rows.push(head.map((_, k) => parseInline(cells[k] ?? '')));
      }
      blocks.push({ t: 'table', head: head.map((c) => parseInline(c)), rows });
      continue;
    }
    const text: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== '' && (text.length === 0 || !startsBlock(lines[i]!))) text.push(lines[i++]!);
    blocks.push({ t: 'p', c: parseInline(text.join('\n')) });
  }
  return blocks;
}

/** The plain text of Markdown (for titles, tooltips and search): markers removed. */
export function markdownToText(src: string): string {
  const inline = (xs: Inline[]): string => xs.map((x) => (typeof x === 'string' ? x : x.t === 'br' ? ' ' : x.t === 'code' ? x.text : inline(x.c))).join('');
  const block = (b: Block): string => {
    switch (b.t) {
      case 'p': case 'h': return inline(b.c);
      case 'ul': case 'ol': return b.items.map(inline).join(' · ');
      case 'quote': return b.c.map(block).join(' ');
      case 'pre': return b.text;
      case 'hr': return '';
      case 'table': return [b.head, ...b.rows].map((r) => r.map(inline).join(' | ')).join(' · ');
    }
  };
  return parseMarkdown(src).map(block).filter(Boolean).join(' ').replace(/\s+/g, ' ').trim();
}

/** A hyperscript function: React's createElement or preact's h (Grid.js). */
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
  const inl = (xs: Inline[]): Array<N | string> => xs.map((x) => {
    if (typeof x === 'string') return x;
    switch (x.t) {
      case 'br': return opts.compact ? ' ' : h('br', null);
      case 'code': return h('code', null, x.text);
      case 'a': return opts.links === false ? h('span', null, ...inl(x.c)) : h('a', { href: x.href, target: '_blank', rel: 'noopener noreferrer nofollow' }, ...inl(x.c));
      default: return h(x.t, null, ...inl(x.c));
    }
  });
  if (opts.compact) {
    const parts: Array<N | string> = [];
    const add = (b: Block) => {
      if (parts.length) parts.push(' ');
      switch (b.t) {
        case 'p': parts.push(...inl(b.c)); break;
        case 'h': parts.push(h('strong', null, ...inl(b.c))); break;
        case 'ul': case 'ol': b.items.forEach((it, k) => { if (k) parts.push(' '); parts.push(`${b.t === 'ol' ? `${(b.start ?? 1) + k}.` : '•'} `, ...inl(it)); }); break;
        case 'quote': b.c.forEach(add); break;
        case 'pre': parts.push(h('code', null, b.text)); break;
        case 'hr': break;
        case 'table': [b.head, ...b.rows].forEach((r) => r.forEach((cell) => { parts.push(...inl(cell), ' '); })); break;
      }
    };
    blocks.forEach(add);
    return parts;
  }
  const blk = (b: Block): N => {
    switch (b.t) {
      case 'p': return h('p', null, ...inl(b.c));
      case 'h': return h(`h${Math.min(6, b.level + offset)}`, null, ...inl(b.c));
      case 'ul': return h('ul', null, ...b.items.map((it) => h('li', null, ...inl(it))));
      case 'ol': return h('ol', b.start ? { start: b.start } : null, ...b.items.map((it) => h('li', null, ...inl(it))));
      case 'quote': return h('blockquote', null, ...b.c.map(blk));
      case 'pre': return h('pre', null, h('code', null, b.text));
      case 'hr': return h('hr', null);
      case 'table': return h('div', { className: 'md-table' }, h('table', null,
        h('thead', null, h('tr', null, ...b.head.map((c) => h('th', { scope: 'col' }, ...inl(c))))),
        h('tbody', null, ...b.rows.map((r) => h('tr', null, ...r.map((c) => h('td', null, ...inl(c))))))));
    }
  };
  return blocks.map(blk);
}
