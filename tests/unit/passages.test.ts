/**
 * Passages cut on document structure (lib/knowledge/passages.ts), on the evaluation's real help
 * documents and on built long ones: a heading stays with its text, lists and tables stay whole,
 * long sections split at paragraph boundaries, nothing is lost; and how the built-in engine quotes one.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { quote } from '../../lib/answers/engines/builtin';
import { documentTitle, PASSAGE_TARGET_CHARS, splitIntoPassages } from '../../lib/knowledge/passages';

const KB = path.join(__dirname, '..', 'eval', 'kb');
const read = (name: string) => fs.readFileSync(path.join(KB, name), 'utf8');
const words = (s: string) =>
  s
    .replace(/[#|*\-–:]/g, ' ')
    .split(/\s+/)
    .filter(Boolean);

/** Every word of the input is in some passage, in order of first appearance per passage. */
function assertNothingLost(text: string, passages: string[]) {
  const all = new Set(words(passages.join('\n')));
  for (const w of words(text)) assert.ok(all.has(w), `"${w}" is in a passage`);
}

describe('passages of real documents', () => {
  const shipping = read('shipping.md');
  const passages = splitIntoPassages(shipping, documentTitle(shipping, 'shipping.md'));

  it('one passage per section, each starting with its own heading on a line of its own, followed by its text', () => {
    const sections = shipping.split('\n').filter((l) => /^#{1,6} /.test(l));
    assert.deepEqual(
      passages.map((p) => p.content.split('\n')[0]),
      sections,
    );
    for (const p of passages) {
      const [head, blank, ...body] = p.content.split('\n');
      assert.match(head!, /^#{1,6} \S/);
      assert.equal(blank, '', `the heading is followed by a blank line, not run into its text: ${p.content}`);
      assert.ok(body.join('').trim().length > 20, 'and by text');
    }
  });

  it('a table stays whole, with its heading, in one passage', () => {
    const table = shipping.split('\n').filter((l) => l.startsWith('|'));
    assert.equal(table.length, 5);
    const holders = passages.filter((p) => table.some((row) => p.content.includes(row)));
    assert.equal(holders.length, 1);
    assert.ok(holders[0]!.content.startsWith('## Shipping rates\n'));
    assert.ok(holders[0]!.content.includes(table.join('\n')));
  });

  it('a list stays whole', () => {
    const list = shipping.split('\n').filter((l) => l.startsWith('- '));
    const holders = passages.filter((p) => list.some((item) => p.content.includes(item)));
    assert.equal(holders.length, 1);
    assert.ok(holders[0]!.content.includes(list.join('\n')));
  });

  it('context carries the title and the heading path for ranking', () => {
    assert.deepEqual(passages.map((p) => p.context).slice(0, 3), [
      'Shipping and delivery',
      'Shipping and delivery › Processing times',
      'Shipping and delivery › Shipping rates',
    ]);
  });

  it('nothing of any evaluation document is lost', () => {
    for (const name of fs.readdirSync(KB).filter((n) => n.endsWith('.md'))) {
      const text = read(name);
      // A heading with no text of its own (a title above its first section) lives on in the context.
      assertNothingLost(
        text,
        splitIntoPassages(text, documentTitle(text, name)).map((p) => `${p.context}\n${p.content}`),
      );
    }
  });

  it('plain text (as PDF extraction gives it) gets its headings recognised by shape, and keeps its short lines', () => {
    const text = [
      'Warranty policy',
      'Nordhaven products are built to last.',
      'How long the warranty lasts',
      'All Nordhaven-brand products carry a five-year warranty against defects in materials and',
      'workmanship, counted from the date of purchase.',
      'Items that cannot be returned',
      'Worn or washed clothing (except for faults covered by the warranty)',
      'Gas canisters and fuel',
      'Gift cards',
      'Personalised items, for example engraved knives.',
    ].join('\n');
    const ps = splitIntoPassages(text, documentTitle(text, 'warranty.pdf'));
    assert.equal(documentTitle(text, 'warranty.pdf'), 'Warranty policy');
    assert.deepEqual(
      ps.map((p) => p.content.split('\n')[0]),
      ['# Warranty policy', '## How long the warranty lasts', '## Items that cannot be returned'],
    );
    assert.ok(ps[1]!.content.includes('five-year warranty against defects in materials and workmanship, counted'), 'wrapped lines joined');
    for (const short of ['Gas canisters and fuel', 'Gift cards']) assert.ok(ps[2]!.content.includes(short), `${short} kept as text`);
  });
});

describe('long sections', () => {
  const paragraph = (i: number) => `Paragraph ${i} explains one rule of the returns policy in detail. `.repeat(4).trim();

  it('split at paragraph boundaries, every part under its heading, in order, nothing lost', () => {
    const paras = Array.from({ length: 14 }, (_, i) => paragraph(i + 1));
    const text = `# Returns\n\n## The long rules\n\n${paras.join('\n\n')}\n`;
    const ps = splitIntoPassages(text, 'Returns').map((p) => p.content);
    assert.ok(ps.length >= 4, `${ps.length} passages`);
    for (const p of ps) {
      assert.ok(p.startsWith('## The long rules\n\n'), p.slice(0, 40));
      assert.ok(p.length <= PASSAGE_TARGET_CHARS + paragraph(14).length, `${p.length} characters`);
    }
    const seen = ps.flatMap((p) => p.split('\n\n').slice(1));
    assert.deepEqual(seen, paras, 'each paragraph whole, exactly once, in order');
  });

  it('a table longer than a passage is cut between rows, its header repeated on every part', () => {
    const rows = Array.from({ length: 60 }, (_, i) => `| Store ${i + 1} | Street ${i + 1} | Mon–Sat 10:00–20:00 |`);
    const text = `## Stores\n\n| Store | Address | Hours |\n|---|---|---|\n${rows.join('\n')}\n`;
    const ps = splitIntoPassages(text, 'Stores').map((p) => p.content);
    assert.ok(ps.length >= 2);
    for (const p of ps) assert.ok(p.startsWith('## Stores\n\n| Store | Address | Hours |\n|---|---|---|\n'), p.slice(0, 80));
    assert.deepEqual(
      ps.flatMap((p) => p.split('\n').filter((l) => /^\| Store \d/.test(l))),
      rows,
    );
  });

  it('a sentence-less wall of text is still cut (never one huge passage)', () => {
    const wall = 'word '.repeat(3000).trim();
    const ps = splitIntoPassages(`# Wall\n\n${wall}`, 'Wall');
    assert.ok(ps.length > 3);
    for (const p of ps) assert.ok(p.content.length <= 2 * PASSAGE_TARGET_CHARS + 10);
  });

  it('property: no word of any Markdown-like document is lost', () => {
    const line = fc.oneof(
      fc.constantFrom('', '', '# Title', '## Section', '### Sub'),
      fc.array(fc.constantFrom('alpha', 'beta', 'gamma', 'delta.', 'Epsilon', 'zeta,'), { minLength: 1, maxLength: 30 }).map((w) => w.join(' ')),
      fc.array(fc.constantFrom('one', 'two', 'three'), { minLength: 1, maxLength: 5 }).map((w) => `- ${w.join(' ')}`),
      fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 4 }).map((w) => `| ${w.join(' | ')} |`),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 80 }), (lines) => {
        const text = lines.join('\n');
        const ps = splitIntoPassages(text, 'T');
        assertNothingLost(
          text.replace(/^#+ .*$/gm, (h) => (ps.some((p) => p.content.includes(h)) ? h : '')),
          ps.map((p) => p.content),
        );
      }),
      { numRuns: 300 },
    );
  });
});

describe('document titles', () => {
  const CASES: Array<[string, string, string]> = [
    ['# Shipping and delivery\n\ntext', 'shipping.md', 'Shipping and delivery'],
    ['intro text\n\n## **Payment** options\n\ntext', 'pay.md', 'Payment options'],
    ['no headings at all, just a sentence.', 'demo-faq.md', 'demo-faq'],
    ['', 'report.final.pdf', 'report.final'],
    ['', '.env', '.env'],
  ];
  for (const [text, file, title] of CASES) it(`${file} → ${title}`, () => assert.equal(documentTitle(text, file), title));
});

describe("the built-in engine's quote of a passage", () => {
  it('renders its heading as a bold line above its text, never as one heading holding the text', () => {
    assert.equal(quote('## Refunds\n\nWe refund you within 14 days.'), '> **Refunds**\n>\n> We refund you within 14 days.');
  });
  it('renders a table as a list of its rows', () => {
    const q = quote(
      '## Shipping rates\n\n| Service | Delivery time | Price |\n|---|---|---|\n| Express | 1–2 working days | €12.95 |\n\nBulky items ship by freight.',
    );
    assert.equal(q, '> **Shipping rates**\n>\n> - **Express** — Delivery time: 1–2 working days; Price: €12.95\n>\n> Bulky items ship by freight.');
  });
});
