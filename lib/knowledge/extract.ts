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
