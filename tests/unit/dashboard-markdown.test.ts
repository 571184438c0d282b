import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { Markdown } from '../../app/(dashboard)/_components/Markdown';
import { markdownToText, parseMarkdown, safeHref } from '../../lib/markdown/markdown';

const html = (text: string, compact = false) => renderToStaticMarkup(createElement(Markdown, { text, compact }));

test('renders the Markdown answers use: emphasis, headings, quotes, lists, code, tables, links', () => {
  assert.equal(html('Open **Account → Export** and *wait*.'), '<div class="md"><p>Open <strong>Account → Export</strong> and <em>wait</em>.</p></div>');
  assert.equal(html('> ## Returns\n> Within 30 days.'), '<div class="md"><blockquote><h4>Returns</h4><p>Within 30 days.</p></blockquote></div>');
  assert.equal(
    html('## Steps\n1. one\n2. two\n\n- a\n- b'),
    '<div class="md"><h4>Steps</h4><ol><li>one</li><li>two</li></ol><ul><li>a</li><li>b</li></ul></div>',
  );
  assert.equal(html('```\n<b>x</b>\n```'), '<div class="md"><pre><code>&lt;b&gt;x&lt;/b&gt;</code></pre></div>');
  assert.equal(html('Use `a*b*c` here'), '<div class="md"><p>Use <code>a*b*c</code> here</p></div>');
  assert.match(
    html('| Plan | Price |\n|---|---|\n| Pro | 9 € |'),
    /<table><thead><tr><th scope="col">Plan<\/th><th scope="col">Price<\/th><\/tr><\/thead><tbody><tr><td>Pro<\/td><td>9 €<\/td><\/tr><\/tbody><\/table>/,
  );
  assert.equal(
    html('[docs](https://example.com/a?b=1) and https://x.test/p.'),
    '<div class="md"><p><a href="https://example.com/a?b=1" target="_blank" rel="noopener noreferrer nofollow">docs</a> and <a href="https://x.test/p" target="_blank" rel="noopener noreferrer nofollow">https://x.test/p</a>.</p></div>',
  );
  assert.equal(html('snake_case_name stays'), '<div class="md"><p>snake_case_name stays</p></div>');
  assert.equal(html('line one  \nline two'), '<div class="md"><p>line one<br/>line two</p></div>');
});

test('compact mode is one inline run for table cells', () => {
  assert.equal(html('## Title\n- a\n- **b**', true), '<span class="md md-compact"><strong>Title</strong> • a • <strong>b</strong></span>');
});

test('raw HTML is text and only http(s)/mailto links survive (XSS payloads)', () => {
  const payloads = [
    '<img src=x onerror=alert(1)>',
    '<script>alert(1)</script>',
    '<svg onload=alert(1)>',
    '<a href="javascript:alert(1)">x</a>',
    '<iframe src="javascript:alert(1)"></iframe>',
    '"><img src=x onerror=alert(1)>',
  ];
  for (const p of payloads) {
    const out = html(p);
    assert.ok(!/<(img|script|svg|iframe|a)\b/i.test(out), `${p} → ${out}`);
    assert.ok(out.includes('&lt;'), out);
  }
  for (const href of [
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    'java\tscript:alert(1)',
    ' javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    '//evil.test/x',
    '/relative',
    'https://ok.test/\u0000x',
  ]) {
    const out = html(`[click](${href}) ![img](${href})`);
    assert.ok(!out.includes('<a '), `${href} → ${out}`);
    assert.ok(out.includes('click'));
  }
  assert.equal(safeHref('mailto:help@example.com'), 'mailto:help@example.com');
  assert.equal(safeHref('javascript:alert(1)'), null);
  // an image becomes a plain link, never an <img>
  assert.equal(
    html('![logo](https://x.test/a.png)'),
    '<div class="md"><p><a href="https://x.test/a.png" target="_blank" rel="noopener noreferrer nofollow">logo</a></p></div>',
  );
});

test('never throws, and text is recovered for tooltips', () => {
  for (const s of ['', '**', '`', '[', '](', '> ', '|', '|-|', '```', '1.', '* * *', '\\', '#'.repeat(9), 'a'.repeat(10_000)]) {
    assert.doesNotThrow(() => html(s));
    assert.ok(Array.isArray(parseMarkdown(s)));
  }
  assert.equal(markdownToText('> ## Reset\n> Go to **Account → Export**.'), 'Reset Go to Account → Export.');
});

test('underscores inside words or identifiers are not emphasis', () => {
  assert.equal(html('window.__xss=1 and window.__xss=2'), '<div class="md"><p>window.__xss=1 and window.__xss=2</p></div>');
  assert.equal(html('__bold__ and _it_'), '<div class="md"><p><strong>bold</strong> and <em>it</em></p></div>');
});
