import { extractInWorker } from '../documents/pool';

/**
 * Text of a document (txt, md, csv, html, pdf or docx) as Markdown-like text that keeps its
 * structure: `#` headings, `- ` / `1. ` list items, `| a | b |` table rows, blank lines between
 * blocks. Read in a worker thread under time, memory, inflation and text limits (lib/documents);
 * a document over a limit is refused with an AppError naming it.
 */
export async function extractText(buf: Uint8Array, contentType: string): Promise<string> {
  return extractInWorker(buf, contentType);
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
