/**
 * The document extractor keeps structure as Markdown-like text (headings, list items, tables,
 * paragraphs separated by blank lines), in linear time, for HTML, CSV, DOCX and PDF.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { csvToMarkdown, extractMarkdown, htmlToMarkdown } from '../../lib/documents/extract-worker';
import { deeplyNestedHtml, structuredDocx, tinyPdf } from '../fixtures/widget-files';

const LIMITS = { maxInflatedBytes: 64 * 1024 * 1024, maxEntries: 10_000, maxTextChars: 2_000_000 };

describe('HTML as Markdown-like text', () => {
  it('keeps headings, paragraphs, nested lists and tables; drops scripts, styles and the head', () => {
    const html = `<html><head><title>T</title><style>p{}</style></head><body>
      <h1>Title &amp; more</h1><p>Hello <b>world</b>.<br>Next line<p>Second paragraph
      <ul><li>one<li>two<ol start="3"><li>a</li><li>b</li></ol></li><li>three</li></ul>
      <table><tr><th>Name<th>Price<tr><td>A|B<td>1</tr></table>
      <div># not a heading</div><script>document.write("<h1>x</h1>")</script><h3>End</h3></body></html>`;
    assert.equal(
      htmlToMarkdown(html),
      [
        '# Title & more',
        'Hello world. Next line',
        'Second paragraph',
        '- one\n- two\n  3. a\n  4. b\n- three',
        '| Name | Price |\n| --- | --- |\n| A\\|B | 1 |',
        '\\# not a heading',
        '### End',
      ].join('\n\n'),
    );
  });

  it('reads 200,000 nested elements in linear time', () => {
    const started = Date.now();
    assert.equal(htmlToMarkdown(deeplyNestedHtml(200_000).toString()), 'deep text');
    assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
  });

  it('refuses text beyond the limit while it is built', () => {
    assert.throws(() => htmlToMarkdown(`<p>${'word '.repeat(10_000)}</p>`, 1000), /more than 1000 characters/);
  });
});

describe('CSV as one Markdown table', () => {
  it('parses quotes, doubled quotes, newlines in fields and CRLF', () => {
    assert.equal(csvToMarkdown('a,b,"c ""q"""\r\n1,2,3\n"x\ny",5,6\n'), '| a | b | c "q" |\n| --- | --- | --- |\n| 1 | 2 | 3 |\n| x y | 5 | 6 |');
  });
});

describe('Word and PDF', () => {
  it('a DOCX keeps its headings, list and table', async () => {
    assert.equal(
      await extractMarkdown(structuredDocx(), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', LIMITS),
      '# Returns policy\n\nYou can return any item within 30 days.\n\n## How to return\n\n- Pack the item\n- Print the label\n\n| Item | Days |\n| --- | --- |\n| Shoes | 30 |',
    );
  });

  it('a PDF yields its text', async () => {
    assert.equal(await extractMarkdown(tinyPdf('Hello PDF world'), 'application/pdf', LIMITS), 'Hello PDF world');
  });
});
