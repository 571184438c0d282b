// Document extraction, run in a worker thread of the pool in lib/documents/pool.ts (never on the
// main thread). From source under tsx (tests, dev); compiled to dist/extract-worker.mjs by the
// production build (lib/documents/pool.ts picks which).
//
// Input: { bytes: Uint8Array, contentType, limits: { maxInflatedBytes, maxEntries, maxTextChars } }.
// Output: { ok: true, text } — Markdown-like text that keeps the document's structure (headings as
// `#` lines, list items as `- ` / `1. ` lines, tables as `| a | b |` rows, blocks separated by blank
// lines) — or { ok: false, reason, detail } for a document that is malformed or over a limit.
import { Tokenizer } from 'htmlparser2';
import mammoth from 'mammoth';
import { getDocumentProxy, getResolvedPDFJS } from 'unpdf';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { readMail as readMailText } from './mail';

// Loaded when the thread starts (piscina imports this file then), not in a document's time budget.
getResolvedPDFJS().catch(() => {});

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export type WorkerLimits = { maxInflatedBytes: number; maxEntries: number; maxTextChars: number };
export type WorkerResult = { ok: true; text: string } | { ok: false; reason: Reason; detail: string };
type Reason = 'too_large' | 'invalid';

/** A refusal the caller turns into an AppError. */
class Refusal extends Error {
  constructor(
    readonly reason: Reason,
    detail: string,
  ) {
    super(detail);
  }
}

const messageOf = (e: unknown) => String((e as { message?: unknown } | null)?.message ?? e).slice(0, 200);

export default async function extract({ bytes, contentType, limits }: { bytes: Uint8Array; contentType: string; limits: WorkerLimits }): Promise<WorkerResult> {
  try {
    const text = await extractMarkdown(bytes, contentType, limits);
    if (text.length > limits.maxTextChars) throw tooMuchText(limits);
    return { ok: true, text };
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, reason: e.reason, detail: e.message };
    return { ok: false, reason: 'invalid', detail: `The document could not be read: ${messageOf(e)}` };
  }
}

const tooMuchText = (limits: WorkerLimits) => new Refusal('too_large', `The document holds more than ${limits.maxTextChars} characters of text.`);

export async function extractMarkdown(bytes: Uint8Array, contentType: string, limits: WorkerLimits): Promise<string> {
  switch (contentType) {
    case 'text/plain':
    case 'text/markdown':
      return normalizeText(decodeUtf8(bytes));
    case 'text/csv':
      return csvToMarkdown(decodeUtf8(bytes), limits.maxTextChars);
    case 'text/html':
      return htmlToMarkdown(decodeUtf8(bytes), limits.maxTextChars);
    case 'application/pdf':
      return pdfToMarkdown(bytes, limits.maxTextChars);
    case DOCX:
      return docxToMarkdown(bytes, limits);
    default:
      throw new Refusal('invalid', `Documents of type ${contentType} cannot be read.`);
  }
}

function decodeUtf8(bytes: Uint8Array): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Refusal('invalid', 'The text is not valid UTF-8.');
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000e-\u001a\u001c-\u001f]/.test(text)) throw new Refusal('invalid', 'The text contains binary control characters.');
  return text.replace(/^\uFEFF/, '');
}

function normalizeText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const cellText = (s: string) => s.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');

function tableRows(rows: string[][]): string {
  const width = rows.reduce((w, r) => Math.max(w, r.length), 0);
  if (width === 0) return '';
  const line = (r: string[]) => `| ${Array.from({ length: width }, (_, i) => r[i] ?? '').join(' | ')} |`;
  return [line(rows[0]!), `|${' --- |'.repeat(width)}`, ...rows.slice(1).map(line)].join('\n');
}

/** RFC 4180 CSV (quoted fields, doubled quotes, CRLF or LF) as one Markdown table; linear time. */
export function csvToMarkdown(text: string, maxChars = Infinity): string {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let size = 0;
  const endField = () => {
    row.push(cellText(field));
    size += field.length + 3;
    field = '';
  };
  const endRow = () => {
    endField();
    if (row.some((c) => c !== '')) rows.push(row);
    row = [];
    if (size > maxChars) throw new Refusal('too_large', `The document holds more than ${maxChars} characters of text.`);
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') endField();
    else if (c === '\n') endRow();
    else if (c !== '\r') field += c;
  }
  if (field !== '' || row.length > 0) endRow();
  return tableRows(rows);
}

// Elements whose content is not text a reader sees.
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math', 'iframe', 'object', 'canvas', 'select', 'button']);
// Elements that end the paragraph before them and start a new one.
const BLOCK = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'header',
  'footer',
  'nav',
  'aside',
  'blockquote',
  'figure',
  'figcaption',
  'address',
  'dl',
  'dt',
  'dd',
  'hr',
  'form',
  'fieldset',
  'details',
  'summary',
  'center',
  'body',
  'html',
  'caption',
  'legend',
]);
const HEADING = /^h([1-6])$/;
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);

/**
 * HTML (a page, or mammoth's rendering of a Word document) as Markdown-like text, in one pass of
 * htmlparser2's tokenizer: linear in the input whatever its nesting.
 */
export function htmlToMarkdown(html: string, maxChars = Infinity): string {
  const blocks: string[] = [];
  let size = 0;
  let skip = 0;
  let pending = '';
  let pre = 0;
  let heading = 0;
  // Lists: a stack of { ordered, n }; their lines form one block.
  const lists: Array<{ ordered: boolean; n: number }> = [];
  let listLines: string[] = [];
  let itemPrefix: string | null = null;
  // The outermost table; nested tables flatten into its cells.
  let tableDepth = 0;
  let rows: string[][] = [];
  let row: string[] | null = null;
  let cell: string | null = null;

  const emit = (block: string) => {
    if (!block) return;
    size += block.length + 2;
    if (size > maxChars) throw new Refusal('too_large', `The document holds more than ${maxChars} characters of text.`);
    blocks.push(block);
  };
  const indent = () => '  '.repeat(Math.min(Math.max(lists.length - 1, 0), 5));
  const flushList = () => {
    if (listLines.length) {
      emit(listLines.join('\n'));
      listLines = [];
    }
  };
  /** Ends the current line of text: a list item's line, a heading, or a paragraph. */
  const endLine = () => {
    const raw = pre ? pending.replace(/^\n+|\s+$/g, '') : pending.replace(/\s+/g, ' ').trim();
    pending = '';
    if (!raw) return;
    if (lists.length) {
      listLines.push(`${itemPrefix ?? `${indent()}  `}${raw.replace(/\s+/g, ' ')}`);
      itemPrefix = null;
      size += raw.length;
      if (size > maxChars) throw new Refusal('too_large', `The document holds more than ${maxChars} characters of text.`);
      return;
    }
    if (heading) emit(`${'#'.repeat(heading)} ${raw}`);
    else emit(pre ? raw : raw.replace(/^(#{1,6}\s)/, '\\$1'));
  };
  const addText = (t: string) => {
    if (skip) return;
    if (cell !== null) cell += t;
    else pending += t;
    if (pending.length + (cell?.length ?? 0) > maxChars) throw new Refusal('too_large', `The document holds more than ${maxChars} characters of text.`);
  };

  const open = (name: string, attrs: Record<string, string>) => {
    if (skip || SKIP.has(name)) {
      if (SKIP.has(name) && !VOID.has(name)) skip++;
      return;
    }
    if (tableDepth) {
      if (name === 'table') tableDepth++;
      else if (tableDepth === 1 && name === 'tr') {
        endCell();
        endRow();
        row = [];
      } else if (tableDepth === 1 && (name === 'td' || name === 'th')) {
        endCell();
        row ??= [];
        cell = '';
      } else addText(' ');
      return;
    }
    const h = HEADING.exec(name);
    if (h && !lists.length) {
      endLine();
      flushList();
      heading = Number(h[1]);
      return;
    }
    if (name === 'ul' || name === 'ol') {
      endLine();
      const start = Number.parseInt(attrs.start ?? '1', 10);
      lists.push({ ordered: name === 'ol', n: Number.isFinite(start) ? Math.min(Math.max(start, 0), 1e9) - 1 : 0 });
      return;
    }
    if (name === 'li') {
      endLine();
      const list = lists[lists.length - 1];
      if (list) itemPrefix = `${indent()}${list.ordered ? `${++list.n}. ` : '- '}`;
      return;
    }
    if (name === 'table') {
      endLine();
      flushList();
      tableDepth = 1;
      rows = [];
      row = null;
      cell = null;
      return;
    }
    if (name === 'pre') {
      endLine();
      pre++;
      return;
    }
    if (name === 'br') {
      addText(pre ? '\n' : ' ');
      return;
    }
    if (BLOCK.has(name)) {
      endLine();
      heading = 0;
    } else if (name === 'img' && attrs.alt) addText(` ${attrs.alt} `);
  };
  const endCell = () => {
    if (cell !== null) {
      row ??= [];
      row.push(cellText(cell));
      cell = null;
    }
  };
  const endRow = () => {
    if (row?.length) rows.push(row);
    row = null;
  };
  const close = (name: string) => {
    if (SKIP.has(name)) {
      if (skip) skip--;
      return;
    }
    if (skip) return;
    if (tableDepth) {
      if (name === 'table') {
        tableDepth--;
        if (tableDepth === 0) {
          endCell();
          endRow();
          emit(tableRows(rows));
          rows = [];
        }
      } else if (tableDepth === 1 && (name === 'td' || name === 'th')) endCell();
      else if (tableDepth === 1 && name === 'tr') {
        endCell();
        endRow();
      } else addText(' ');
      return;
    }
    if (HEADING.test(name)) {
      if (heading) {
        endLine();
        heading = 0;
      }
      return;
    }
    if (name === 'ul' || name === 'ol') {
      endLine();
      lists.pop();
      if (!lists.length) flushList();
      return;
    }
    if (name === 'li') {
      endLine();
      return;
    }
    if (name === 'pre') {
      endLine();
      if (pre) pre--;
      return;
    }
    if (BLOCK.has(name)) endLine();
  };

  // htmlparser2's Tokenizer (linear time); its Parser keeps an open-element stack with O(depth)
  // operations, quadratic on deeply nested input, so the few structure rules live here instead.
  let tag = '';
  let attrs: Record<string, string> = {};
  let attrName = '';
  let attrValue = '';
  const tokenizer = new Tokenizer(
    { decodeEntities: true },
    {
      ontext: (start, end) => addText(html.slice(start, end)),
      ontextentity: (cp) => addText(String.fromCodePoint(cp)),
      onopentagname: (start, end) => {
        tag = html.slice(start, end).toLowerCase();
        attrs = {};
      },
      onattribname: (start, end) => {
        attrName = html.slice(start, end).toLowerCase();
        attrValue = '';
      },
      onattribdata: (start, end) => {
        if (attrValue.length < 1000) attrValue += html.slice(start, end);
      },
      onattribentity: (cp) => {
        if (attrValue.length < 1000) attrValue += String.fromCodePoint(cp);
      },
      onattribend: () => {
        if (!(attrName in attrs)) attrs[attrName] = attrValue.slice(0, 1000);
      },
      onopentagend: () => open(tag, attrs),
      onselfclosingtag: () => open(tag, attrs),
      onclosetag: (start, end) => close(html.slice(start, end).toLowerCase()),
      oncdata() {},
      oncomment() {},
      ondeclaration() {},
      onprocessinginstruction() {},
      onend() {},
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  if (tableDepth) {
    endCell();
    endRow();
    emit(tableRows(rows));
  }
  endLine();
  flushList();
  return blocks.join('\n\n');
}

/**
 * A PDF's text through pdf.js (unpdf): lines rebuilt from the text items, a wider vertical gap
 * starts a new paragraph, and a short line set clearly larger than the body text becomes a heading.
 */
async function pdfToMarkdown(bytes: Uint8Array, maxChars: number): Promise<string> {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false, stopAtErrors: false });
  } catch (e) {
    throw new Refusal('invalid', `The PDF could not be read: ${messageOf(e)}`);
  }
  try {
    type Line = { text: string; height: number; y: number | null };
    const pages: Line[][] = [];
    const sizes = new Map<number, number>();
    let size = 0;
    for (let p = 1; p <= pdf.numPages; p++) {
      const page = await pdf.getPage(p);
      const content = await page.getTextContent();
      const lines: Line[] = [];
      let line: Line = { text: '', height: 0, y: null };
      const endLine = () => {
        const text = line.text.replace(/\s+/g, ' ').trim();
        if (text) {
          lines.push({ text, height: line.height, y: line.y });
          const h = Math.round(line.height);
          sizes.set(h, (sizes.get(h) ?? 0) + text.length);
          size += text.length + 1;
          if (size > maxChars) throw new Refusal('too_large', `The document holds more than ${maxChars} characters of text.`);
        }
        line = { text: '', height: 0, y: null };
      };
      for (const item of content.items) {
        if (!('str' in item) || typeof item.str !== 'string') continue;
        const y: number | null = item.transform?.[5] ?? null;
        if (line.y !== null && y !== null && Math.abs(line.y - y) > Math.max(line.height, item.height, 1) * 0.5 && line.text) endLine();
        line.text += item.str;
        line.height = Math.max(line.height, item.height ?? 0);
        if (line.y === null) line.y = y;
        if (item.hasEOL) endLine();
        else if (line.text.length > maxChars) throw new Refusal('too_large', `The document holds more than ${maxChars} characters of text.`);
      }
      endLine();
      pages.push(lines);
      page.cleanup();
    }
    let body = 0;
    let most = -1;
    for (const [h, n] of sizes)
      if (n > most) {
        most = n;
        body = h;
      }
    const blocks: string[] = [];
    for (const lines of pages) {
      let para: string[] = [];
      let prev: Line | null = null;
      const endPara = () => {
        if (para.length) blocks.push(para.join(' '));
        para = [];
      };
      for (const l of lines) {
        const isHeading = body > 0 && l.height >= body * 1.3 && l.text.length <= 120;
        const gap = prev && prev.y !== null && l.y !== null ? Math.abs(prev.y - l.y) : 0;
        if (isHeading) {
          endPara();
          blocks.push(`${l.height >= body * 1.8 ? '#' : '##'} ${l.text}`);
        } else {
          if (prev && gap > Math.max(prev.height, l.height) * 1.8) endPara();
          para.push(l.text);
        }
        prev = l;
      }
      endPara();
    }
    return blocks.join('\n\n');
  } finally {
    await pdf.destroy().catch(() => {});
  }
}

/**
 * A Word document. Its ZIP container is checked with yauzl first (entry count, each entry's
 * declared size AND the bytes it really inflates to, summed over all entries), so a zip bomb is
 * refused before mammoth inflates anything; mammoth then renders it as HTML (headings, lists,
 * tables), which becomes Markdown-like text.
 */
async function docxToMarkdown(bytes: Uint8Array, limits: WorkerLimits): Promise<string> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  await checkZip(buffer, limits);
  let result: { value: string };
  try {
    result = await mammoth.convertToHtml(
      { buffer },
      {
        // Images are never read (they are not text, and can be large).
        convertImage: mammoth.images.imgElement(async () => ({ src: '' })),
      },
    );
  } catch (e) {
    throw new Refusal('invalid', `The Word document could not be read: ${messageOf(e)}`);
  }
  return htmlToMarkdown(result.value, limits.maxTextChars);
}

export async function checkZip(buffer: Buffer, limits: WorkerLimits): Promise<void> {
  const zip = await new Promise<ZipFile>((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true, validateEntrySizes: false, strictFileNames: false, decodeStrings: true }, (err, z) => {
      if (err) reject(new Refusal('invalid', `The file is not a valid ZIP container: ${err.message}`));
      else resolve(z!);
    });
  });
  const tooLarge = (what: string) => new Refusal('too_large', `The document ${what}; at most ${limits.maxInflatedBytes} bytes may be unpacked.`);
  let declared = 0;
  let actual = 0;
  let entries = 0;
  await new Promise<void>((resolve, reject) => {
    let failed = false;
    const fail = (e: Error) => {
      if (failed) return;
      failed = true;
      try {
        zip.close();
      } catch {
        /* already closed */
      }
      reject(e);
    };
    zip.on('error', (e: Error) => fail(e instanceof Refusal ? e : new Refusal('invalid', `The ZIP container is damaged: ${e.message}`)));
    zip.on('end', () => resolve());
    zip.on('entry', (entry: Entry) => {
      if (++entries > limits.maxEntries) return fail(new Refusal('too_large', `The document has more than ${limits.maxEntries} parts.`));
      declared += entry.uncompressedSize;
      if (declared > limits.maxInflatedBytes) return fail(tooLarge(`declares ${declared} bytes uncompressed`));
      if (entry.fileName.endsWith('/')) return zip.readEntry();
      zip.openReadStream(entry, (err, stream) => {
        if (err || !stream) return fail(new Refusal('invalid', `The ZIP container is damaged: ${err?.message ?? 'no stream'}`));
        let inEntry = 0;
        stream.on('data', (chunk: Buffer) => {
          inEntry += chunk.length;
          actual += chunk.length;
          if (inEntry > entry.uncompressedSize) {
            stream.destroy();
            fail(
              new Refusal(
                'too_large',
                `The document's part ${entry.fileName} inflates to more than the ${entry.uncompressedSize} bytes it declares (a zip bomb?).`,
              ),
            );
          } else if (actual > limits.maxInflatedBytes) {
            stream.destroy();
            fail(tooLarge('inflates to more bytes than allowed'));
          }
        });
        stream.on('error', (e: Error) => fail(new Refusal('invalid', `The document's part ${entry.fileName} is damaged: ${e.message}`)));
        stream.on('end', () => {
          if (inEntry !== entry.uncompressedSize) return fail(new Refusal('invalid', `The document's part ${entry.fileName} is shorter than it declares.`));
          zip.readEntry();
        });
      });
    });
    zip.readEntry();
  });
}

/** The pool's named task `readMail` (lib/documents/pool.ts readMailInWorker): a received mail, read off the main thread. */
export function readMail(task: { raw: Uint8Array; replies: boolean }) {
  return readMailText(task.raw, { replies: task.replies });
}
