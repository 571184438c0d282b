/**
 * Passages of a document, cut on its structure. Input is the Markdown-like text extraction
 * produces (headings as `#` lines, list items as `- `/`1. `, tables as `|` rows). A heading stays
 * with its text (every passage of a section starts with the section's heading), lists and tables
 * stay whole, and a long section is cut at paragraph boundaries (then sentences, list items or
 * table rows, the table's header repeated). Plain text without any `#` heading (PDF text) gets
 * its headings recognised by shape: a short line, no closing punctuation, after a finished sentence.
 */

export type Passage = {
  /** Markdown: the section's heading line, then its blocks separated by blank lines. */
  content: string;
  /** The document title and the headings above this passage, outermost first (ranking context). */
  context: string;
};

export const PASSAGE_TARGET_CHARS = 800;
const HARD_MAX_CHARS = 2 * PASSAGE_TARGET_CHARS;

type Block = { kind: 'heading'; level: number; text: string } | { kind: 'paragraph' | 'list' | 'table' | 'code'; lines: string[] };

const HEADING = /^(#{1,6})\s+(.+?)\s*#*\s*$/;
const LIST_ITEM = /^\s*(?:[-*+•]|\d{1,3}[.)])\s+\S/;
const TABLE_ROW = /^\s*\|/;
const FENCE = /^\s*(```|~~~)/;

/** The document's title: its first heading, else its file name without the extension. */
export function documentTitle(text: string, filename: string): string {
  for (const b of parseBlocks(text)) {
    if (b.kind === 'heading') return clip(stripInline(b.text), 200);
  }
  const base = filename.replace(/^.*[\\/]/, '');
  const dot = base.lastIndexOf('.');
  return clip((dot > 0 ? base.slice(0, dot) : base).trim() || base, 200);
}

export function splitIntoPassages(text: string, title = ''): Passage[] {
  const blocks = parseBlocks(text);
  const out: Passage[] = [];
  const path: Array<{ level: number; text: string }> = [];
  let heading: { level: number; text: string } | null = null;
  let body: Block[] = [];

  const flush = () => {
    if (body.length) {
      const ctx = [title, ...path.map((h) => stripInline(h.text))].filter((s, i, all) => s && all.indexOf(s) === i);
      const head = heading ? `${'#'.repeat(heading.level)} ${heading.text}` : '';
      for (const content of packSection(head, body)) out.push({ content, context: ctx.join(' › ') });
    }
    body = [];
  };

  for (const b of blocks) {
    if (b.kind === 'heading') {
      flush();
      while (path.length && path.at(-1)!.level >= b.level) path.pop();
      path.push({ level: b.level, text: b.text });
      heading = { level: b.level, text: b.text };
    } else {
      body.push(b);
    }
  }
  flush();
  if (out.length === 0 && text.trim()) {
    // Only headings: keep them, so the document is not empty.
    out.push({ content: clip(text.trim(), HARD_MAX_CHARS), context: title });
  }
  return out;
}

/** Blocks of the text, in order. */
function parseBlocks(text: string): Block[] {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .replace(/\u0000/g, '')
    .split('\n');
  const markdownHeadings = lines.some((l) => HEADING.test(l));
  const blocks: Block[] = [];
  let i = 0;
  let previousEndsSentence = true;
  while (i < lines.length) {
    const line = lines[i]!;
    if (!line.trim()) {
      i++;
      previousEndsSentence = true;
      continue;
    }
    if (FENCE.test(line)) {
      const fence = line.trim().slice(0, 3);
      const code = [line];
      i++;
      while (i < lines.length && !lines[i]!.trim().startsWith(fence)) code.push(lines[i++]!);
      if (i < lines.length) code.push(lines[i++]!);
      blocks.push({ kind: 'code', lines: code });
      continue;
    }
    const h = HEADING.exec(line);
    if (h) {
      blocks.push({ kind: 'heading', level: h[1]!.length, text: h[2]! });
      i++;
      continue;
    }
    if (TABLE_ROW.test(line)) {
      const rows: string[] = [];
      while (i < lines.length && TABLE_ROW.test(lines[i]!)) rows.push(lines[i++]!.trim());
      blocks.push({ kind: 'table', lines: rows });
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const items: string[] = [];
      while (i < lines.length) {
        const l = lines[i]!;
        if (LIST_ITEM.test(l)) {
          items.push(l.trimEnd());
          i++;
          continue;
        }
        if (l.trim() && /^\s+\S/.test(l) && items.length) {
          items[items.length - 1] += ` ${l.trim()}`;
          i++;
          continue;
        }
        if (!l.trim() && i + 1 < lines.length && LIST_ITEM.test(lines[i + 1]!)) {
          i++;
          continue;
        } // a loose list
        break;
      }
      blocks.push({ kind: 'list', lines: items });
      continue;
    }
    // A paragraph: lines up to a blank line or the start of another kind of block.
    const para: string[] = [];
    while (i < lines.length) {
      const l = lines[i]!;
      if (!l.trim() || HEADING.test(l) || TABLE_ROW.test(l) || LIST_ITEM.test(l) || FENCE.test(l)) break;
      if (!markdownHeadings && looksLikeHeading(l, nextText(lines, i), para.length === 0 ? previousEndsSentence : endsSentence(para.at(-1)!))) {
        if (para.length) break;
        blocks.push({ kind: 'heading', level: blocks.some((b) => b.kind === 'heading') ? 2 : 1, text: l.trim() });
        i++;
        previousEndsSentence = true;
        continue;
      }
      para.push(l.trim());
      i++;
    }
    if (para.length) {
      blocks.push({ kind: 'paragraph', lines: para });
      previousEndsSentence = endsSentence(para.at(-1)!);
    }
  }
  return blocks;
}

function nextText(lines: string[], i: number): string | undefined {
  for (let j = i + 1; j < lines.length; j++) if (lines[j]!.trim()) return lines[j];
  return undefined;
}

const endsSentence = (l: string) => /[.!?:;)"'”’]\s*$/.test(l);

/** In plain text: a short line that does not end like a sentence, after a finished sentence, before more text. */
function looksLikeHeading(line: string, next: string | undefined, afterSentenceEnd: boolean): boolean {
  const t = line.trim();
  if (!afterSentenceEnd || next === undefined || !next.trim()) return false;
  if (t.length < 3 || t.length > 70 || /[.,;:]$/.test(t)) return false;
  if (!/^[\p{Lu}\d]/u.test(t)) return false;
  if (t.split(/\s+/).length > 10) return false;
  // What follows must read as text (a sentence), or this line is just one of several short lines.
  const n = next.trim();
  return n.length > 70 || /[.!?:)]$/.test(n);
}

/** Packs a section's blocks into passages of about PASSAGE_TARGET_CHARS, each starting with the heading. */
function packSection(head: string, body: Block[]): string[] {
  const pieces = body.flatMap(piecesOf);
  const passages: string[] = [];
  let current: string[] = [];
  let size = head.length;
  const push = () => {
    if (current.length) passages.push([head, ...current].filter(Boolean).join('\n\n'));
    current = [];
    size = head.length;
  };
  for (const p of pieces) {
    if (current.length && size + p.length + 2 > PASSAGE_TARGET_CHARS) push();
    current.push(p);
    size += p.length + 2;
  }
  push();
  return passages;
}

/** A block as one piece, or (when longer than the hard maximum) as several, cut at its natural joints. */
function piecesOf(b: Block): string[] {
  if (b.kind === 'heading') return [];
  if (b.kind === 'paragraph') {
    const text = b.lines.join(' ').replace(/\s+/g, ' ').trim();
    if (text.length <= HARD_MAX_CHARS) return [text];
    return group(
      text.split(/(?<=[.!?])\s+(?=\S)/).flatMap((s) => hardCut(s)),
      ' ',
    );
  }
  const whole = b.lines.join('\n');
  if (whole.length <= HARD_MAX_CHARS) return [whole];
  if (b.kind === 'table') {
    const headerRows = b.lines.length > 1 && /^\s*\|[\s|:-]+\|\s*$/.test(b.lines[1]!) ? b.lines.slice(0, 2) : [];
    const header = headerRows.join('\n');
    return group(
      b.lines.slice(headerRows.length).map((r) => clip(r, HARD_MAX_CHARS - header.length - 1)),
      '\n',
      header,
    );
  }
  return group(
    b.lines.flatMap((l) => hardCut(l)),
    '\n',
  );
}

/** Consecutive parts joined while they fit PASSAGE_TARGET_CHARS; each group starts with `prefix`. */
function group(parts: string[], sep: string, prefix = ''): string[] {
  const out: string[] = [];
  let current = '';
  for (const p of parts) {
    if (current && current.length + sep.length + p.length > PASSAGE_TARGET_CHARS) {
      out.push(current);
      current = '';
    }
    current = current ? `${current}${sep}${p}` : prefix ? `${prefix}\n${p}` : p;
  }
  if (current) out.push(current);
  return out;
}

function hardCut(s: string): string[] {
  const out: string[] = [];
  let rest = s;
  while (rest.length > HARD_MAX_CHARS) {
    const cut = rest.lastIndexOf(' ', PASSAGE_TARGET_CHARS);
    const at = cut > PASSAGE_TARGET_CHARS / 2 ? cut : PASSAGE_TARGET_CHARS;
    out.push(rest.slice(0, at).trim());
    rest = rest.slice(at).trim();
  }
  if (rest) out.push(rest);
  return out;
}

function stripInline(s: string): string {
  return s
    .replace(/[*_`]+/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim();
}

function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1).replace(/\s+\S*$/, '')}…`;
}
