/**
 * The evaluation's knowledge base: tests/eval/kb/*.md and *.html are loaded as they are; each
 * `NAME.pdf.md` / `NAME.docx.md` is the source of a real PDF / DOCX built here in code (so no
 * binary sits in the repository): headings in a larger bold font (PDF) or Word's Heading 1/2 styles
 * (DOCX), paragraphs wrapped into lines as a word processor would.
 */
import fs from 'node:fs';
import path from 'node:path';
import { zipStored } from '../fixtures/widget-files';

export const KB_DIR = path.join(__dirname, 'kb');

type Block = { kind: 'h1' | 'h2' | 'p'; text: string };

function blocksOf(source: string): Block[] {
  return source
    .split(/\n\s*\n/)
    .map((b) => b.trim())
    .filter(Boolean)
    .map((b) => {
      if (b.startsWith('## ')) return { kind: 'h2' as const, text: b.slice(3) };
      if (b.startsWith('# ')) return { kind: 'h1' as const, text: b.slice(2) };
      return { kind: 'p' as const, text: b.replace(/\s+/g, ' ') };
    });
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** A one- or two-page PDF (Helvetica; headings in Helvetica-Bold 16 pt) with a correct xref table. */
export function pdfOf(source: string): Buffer {
  const pages: string[][] = [[]];
  let y = 760;
  const esc = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`).replace(/[^\x20-\x7e]/g, (c) => (c === '–' ? '-' : c === '€' ? 'EUR ' : '?'));
  for (const b of blocksOf(source)) {
    const [font, size, lines] = b.kind === 'p' ? (['/F1', 11, wrap(b.text, 92)] as const) : (['/F2', b.kind === 'h1' ? 18 : 14, [b.text]] as const);
    if (y - lines.length * (size + 4) < 60) {
      pages.push([]);
      y = 760;
    }
    y -= b.kind === 'p' ? 6 : 14;
    for (const l of lines) {
      pages.at(-1)!.push(`BT ${font} ${size} Tf 60 ${y} Td (${esc(l)}) Tj ET`);
      y -= size + 4;
    }
  }
  const objects: string[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '', // pages, filled below
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>',
  ];
  const kids: string[] = [];
  for (const content of pages) {
    const stream = content.join('\n');
    objects.push(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`);
    const contentRef = objects.length;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents ${contentRef} 0 R >>`);
    kids.push(`${objects.length} 0 R`);
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${kids.length} >>`;
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A Word document whose headings use the built-in "heading 1"/"heading 2" styles. */
export function docxOf(source: string): Buffer {
  const x = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const body = blocksOf(source)
    .map((b) => {
      const style = b.kind === 'h1' ? '<w:pPr><w:pStyle w:val="Heading1"/></w:pPr>' : b.kind === 'h2' ? '<w:pPr><w:pStyle w:val="Heading2"/></w:pPr>' : '';
      return `<w:p>${style}<w:r><w:t xml:space="preserve">${x(b.text)}</w:t></w:r></w:p>`;
    })
    .join('');
  const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
  const heading = (id: string, name: string) =>
    `<w:style w:type="paragraph" w:styleId="${id}"><w:name w:val="${name}"/><w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="${id.slice(-1) === '1' ? 0 : 1}"/></w:pPr><w:rPr><w:b/></w:rPr></w:style>`;
  return zipStored([
    {
      name: '[Content_Types].xml',
      data: '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>',
    },
    {
      name: '_rels/.rels',
      data: '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    },
    {
      name: 'word/_rels/document.xml.rels',
      data: '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>',
    },
    {
      name: 'word/styles.xml',
      data: `<?xml version="1.0" encoding="UTF-8"?><w:styles ${W}><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>${heading('Heading1', 'heading 1')}${heading('Heading2', 'heading 2')}</w:styles>`,
    },
    { name: 'word/document.xml', data: `<?xml version="1.0" encoding="UTF-8"?><w:document ${W}><w:body>${body}</w:body></w:document>` },
  ]);
}

/** Every document of the evaluation's knowledge base, as the file a customer would upload. */
export function evalDocuments(): Array<{ filename: string; data: Buffer }> {
  return fs
    .readdirSync(KB_DIR)
    .sort()
    .map((name) => {
      const source = fs.readFileSync(path.join(KB_DIR, name));
      if (name.endsWith('.pdf.md')) return { filename: name.slice(0, -3), data: pdfOf(source.toString('utf8')) };
      if (name.endsWith('.docx.md')) return { filename: name.slice(0, -3), data: docxOf(source.toString('utf8')) };
      return { filename: name, data: source };
    });
}
