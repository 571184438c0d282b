import { inflateRawSync } from 'node:zlib';
import { AppError } from '../api/errors';
import { decodeText, DOCX_TYPE } from '../uploads/sniff';

/** Plain text of a document: txt, md, csv, html, pdf or docx. */
export async function extractText(buf: Uint8Array, contentType: string): Promise<string> {
  switch (contentType) {
    case 'text/plain': case 'text/markdown': case 'text/csv':
      return decodeText(buf) ?? '';
    case 'text/html':
      return htmlToText(decodeText(buf) ?? '');
    case 'application/pdf': {
      try {
        const { extractText: pdfText, getDocumentProxy } = await import('unpdf');
        const pdf = await getDocumentProxy(new Uint8Array(buf));
        const { text } = await pdfText(pdf, { mergePages: true });
        return Array.isArray(text) ? text.join('\n\n') : text;
      } catch (e) {
        throw new AppError('invalid_request', `Could not read the PDF: ${(e as Error).message}`);
      }
    }
    case DOCX_TYPE:
      return docxText(buf);
    default:
      return '';
  }
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

export function htmlToText(html: string): string {
  return decodeEntities(html
    .replace(/<(script|style|noscript|template)[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(br|\/p|\/div|\/li|\/h[1-6]|\/tr|\/section|\/article)\b[^>]*>/gi, '\n')
    .replace(/<[^>]+>/g, ' '))
    .replace(/[ \t]+/g, ' ')
    .replace(/\n\s*\n+/g, '\n\n')
    .trim();
}

/** A .docx is a ZIP; its text is in word/document.xml (<w:t> runs, </w:p> paragraphs). */
export function docxText(buf: Uint8Array): string {
  const xml = readZipEntry(Buffer.from(buf), 'word/document.xml');
  if (xml === null) throw new AppError('invalid_request', 'Could not read the .docx file (no word/document.xml).');
  return decodeEntities(xml
    .replace(/<\/w:p>/g, '\n')
    .replace(/<w:tab\/>/g, '\t')
    .replace(/<w:br\/>/g, '\n')
    .replace(/<[^>]+>/g, ''))
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function readZipEntry(zip: Buffer, name: string): string | null {
  // End of central directory: the last 22..65557 bytes.
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 65557); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) { eocd = i; break; }
  }
  if (eocd < 0) return null;
  const entries = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  for (let n = 0; n < entries && p + 46 <= zip.length; n++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) return null;
    const method = zip.readUInt16LE(p + 10);
    const compressed = zip.readUInt32LE(p + 20);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const local = zip.readUInt32LE(p + 42);
    const entryName = zip.subarray(p + 46, p + 46 + nameLen).toString('utf8');
    if (entryName === name) {
      if (local + 30 > zip.length) return null;
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + compressed);
      if (method === 0) return data.toString('utf8');
      if (method === 8) return inflateRawSync(data, { maxOutputLength: 64 * 1024 * 1024 }).toString('utf8');
      return null;
    }
    p += 46 + nameLen + extraLen + commentLen;
  }
  return null;
}

/** Passages of about `target` characters, cut at paragraph, then sentence boundaries. */
export function splitPassages(text: string, target = 700): string[] {
  const paragraphs = text.replace(/\r\n?/g, '\n').split(/\n\s*\n/).map((p) => p.replace(/\s+/g, ' ').trim()).filter(Boolean);
  const out: string[] = [];
  let current = '';
  const push = () => { if (current.trim()) out.push(current.trim()); current = ''; };
  for (const para of paragraphs) {
    if (/^#{1,6} /.test(para) && current) push(); // a Markdown heading starts a new passage
    const pieces = para.length > target * 1.5 ? para.split(/(?<=[.!?])\s+/) : [para];
    for (let piece of pieces) {
      while (piece.length > target * 2) { // a very long sentence: hard cut
        if (current) push();
        out.push(piece.slice(0, target));
        piece = piece.slice(target);
      }
      if (current && current.length + piece.length + 1 > target) push();
      current = current ? `${current}${pieces.length > 1 ? ' ' : '\n\n'}${piece}` : piece;
    }
    if (current.length >= target * 0.6) push();
  }
  push();
  return out;
}
