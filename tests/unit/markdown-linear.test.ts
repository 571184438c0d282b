/**
 * The Markdown parser's cost is linear and bounded (issue 23 item 4): any 4,000-character
 * question — random, or built from the runs that made the old renderer quadratic — parses and
 * renders within a few milliseconds per KB, and nesting stops at the depth limits.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { Markdown } from '../../app/(dashboard)/_components/Markdown';
import { LIMITS, parseMarkdown, renderMarkdownTree, type Hyperscript } from '../../lib/markdown/markdown';
import { hostileMarkdown } from '../fixtures/hostile-markdown';

const CHARS = 4000;
const MS_PER_KB = 4; // generous for a shared, loaded machine: the old renderer took 50–460 ms for these
const budget = (text: string) => Math.max(2, (text.length / 1024) * MS_PER_KB);

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
type Html = { html: string };
/** An HTML string builder: the same tree every renderer gets, without a framework's own cost. */
const h: Hyperscript<Html> = (type, props, ...children) => ({
  html: `<${type}${Object.entries(props ?? {})
    .map(([k, v]) => ` ${k}="${escapeHtml(String(v))}"`)
    .join('')}>${children.map((c) => (typeof c === 'string' ? escapeHtml(c) : c.html)).join('')}</${type}>`,
});
const render = (text: string) =>
  renderMarkdownTree(parseMarkdown(text), h)
    .map((n) => (typeof n === 'string' ? escapeHtml(n) : n.html))
    .join('');

/**
 * CPU time of one render, the least of up to five tries: a shared machine preempts and collects
 * garbage at random, but a quadratic renderer never gets under the budget however often it tries.
 */
function timed(text: string): { ms: number; html: string } {
  let ms = Infinity;
  let html = '';
  for (let r = 0; r < 5 && ms > budget(text); r++) {
    const t = process.cpuUsage();
    html = render(text);
    const used = process.cpuUsage(t);
    ms = Math.min(ms, (used.user + used.system) / 1000);
  }
  return { ms, html };
}

const TAGS = new Set([
  'p',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'li',
  'blockquote',
  'pre',
  'code',
  'hr',
  'br',
  'div',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'strong',
  'em',
  'del',
  'a',
]);
function assertSafe(html: string, text: string) {
  for (const m of html.matchAll(/<(\/?)([a-z0-9]+)([^>]*)>/g)) {
    assert.ok(TAGS.has(m[2]!), `unexpected <${m[2]}> from ${JSON.stringify(text.slice(0, 80))}`);
    for (const a of m[3]!.matchAll(/ href="([^"]*)"/g)) assert.match(a[1]!, /^(https?:\/\/|mailto:)/i);
  }
  const depth = (html.match(/<blockquote>/g) ?? []).length;
  assert.ok(depth <= LIMITS.quoteDepth * Math.max(1, text.split('\n').length), 'quote nesting is bounded');
}

const pieces = [
  '>',
  '> ',
  '[',
  ']',
  '(',
  ')',
  '](',
  '[a](',
  '![',
  '*',
  '**',
  '_',
  '__',
  '~~',
  '`',
  '``',
  '|',
  '|-',
  '-',
  '#',
  '# ',
  '<',
  '<https://',
  'https://a',
  'http://',
  '\\',
  '"',
  ' ',
  '  ',
  '\n',
  '\n\n',
  '1. ',
  '- ',
  'a',
  'word',
  '.',
  ':',
];
const piece = fc.constantFrom(...pieces);
const fillTo = (s: string) => (s.length === 0 ? ' '.repeat(CHARS) : s.repeat(Math.ceil(CHARS / s.length)).slice(0, CHARS));
const randomText = fc.array(piece, { minLength: 400, maxLength: 2000 }).map((xs) => fillTo(xs.join('')));
/** One short unit repeated to 4,000 characters: the shape of every quadratic case. */
const runText = fc.array(piece, { minLength: 1, maxLength: 4 }).map((xs) => fillTo(xs.join('')));
/** Openers first, then closers: nesting as deep as the text allows. */
const nestedText = fc.tuple(fc.array(piece, { minLength: 1, maxLength: 3 }), fc.array(piece, { minLength: 1, maxLength: 3 })).map(([open, close]) => {
  const o = open.join('');
  const c = close.join('');
  const n = Math.floor(CHARS / 2 / Math.max(1, o.length + c.length));
  return (o.repeat(n) + 'x' + c.repeat(n)).slice(0, CHARS);
});

describe('Markdown renders in linear time with bounded nesting', () => {
  for (const [name, arb, runs] of [
    ['random', randomText, 150],
    ['repeated runs', runText, 200],
    ['nested openers and closers', nestedText, 150],
  ] as const) {
    it(`any 4,000-character question (${name}) renders within ${MS_PER_KB} ms per KB`, () => {
      fc.assert(
        fc.property(arb, (text) => {
          const { ms, html } = timed(text);
          assertSafe(html, text);
          assert.ok(ms <= budget(text), `${ms.toFixed(1)} ms for ${JSON.stringify(text.slice(0, 40))}…`);
        }),
        { numRuns: runs },
      );
    });
  }

  it('every hostile question of the fixture renders within budget', () => {
    for (const { name, text } of hostileMarkdown) {
      const { ms } = timed(text);
      assert.ok(ms <= budget(text), `${name}: ${ms.toFixed(1)} ms for ${text.length} chars`);
    }
  });

  it('regression: 3,000 ">" renders (was a 500: the stack overflowed) with quotes nested at most LIMITS.quoteDepth deep', () => {
    const text = `${'>'.repeat(3000)} deep`;
    const out = renderToStaticMarkup(createElement(Markdown, { text }));
    assert.equal((out.match(/<blockquote>/g) ?? []).length, LIMITS.quoteDepth);
    assert.ok(out.includes(`${'&gt;'.repeat(3000 - LIMITS.quoteDepth)} deep`), 'the deeper markers are shown as typed');
    assert.ok(timed(text).ms <= budget(text));
  });

  it('regression: the quadratic link cases ("[" runs, "[a](" runs without a closing parenthesis)', () => {
    for (const text of [fillTo('['), fillTo('[a]('), fillTo('!['), `${'['.repeat(2000)}](${'a'.repeat(1990)}`]) {
      const { ms, html } = timed(text);
      assert.ok(ms <= budget(text), `${text.slice(0, 8)}…: ${ms.toFixed(1)} ms`);
      assert.ok(!html.includes('<a '), 'no link without a destination');
    }
    // Still links where they are links.
    assert.equal(
      render(`${'['.repeat(50)}docs](https://x.test/a)`),
      `<p><a href="https://x.test/a" target="_blank" rel="noopener noreferrer nofollow">${'['.repeat(49)}docs</a></p>`,
    );
  });

  it('emphasis, strike-through and links nest at most LIMITS.inlineDepth deep; deeper markers are text', () => {
    const html = render('[**a *b ~~c __d _e_ d__ c~~ b* a**](https://x.test)');
    assert.equal(
      html,
      '<p><a href="https://x.test" target="_blank" rel="noopener noreferrer nofollow"><strong>a <em>b <del>c __d _e_ d__ c</del> b</em> a</strong></a></p>',
    );
    assert.equal(LIMITS.inlineDepth, 4);
  });

  it('a text makes at most LIMITS.elements elements; the rest is shown as typed', () => {
    const count = (html: string, tag: string) => (html.match(new RegExp(`<${tag}>`, 'g')) ?? []).length;
    const strong = render('**a** '.repeat(1000));
    assert.ok(count(strong, 'strong') < LIMITS.elements && count(strong, 'strong') > LIMITS.elements - 5, String(count(strong, 'strong')));
    assert.ok(strong.endsWith('**a** </p>'), 'the rest is text');
    const list = render('- item\n'.repeat(2000));
    assert.ok(count(list, 'li') < LIMITS.elements, String(count(list, 'li')));
    assert.ok(list.includes('<p>- item\n- item'), list.slice(-60));
    const table = render(`a|b\n-|-\n${'x|y\n'.repeat(1000)}`);
    assert.ok(count(table, 'td') <= LIMITS.elements, String(count(table, 'td')));
    assert.ok(table.includes('x|y'), 'rows beyond the budget are text');
    // An ordinary long answer is far below it.
    const answer = `## Steps\n${Array.from({ length: 40 }, (_, i) => `${i + 1}. open **Settings** and [read](https://x.test/${i})`).join('\n')}\n\n| a | b |\n|---|---|\n${'| **x** | y |\n'.repeat(60)}`;
    assert.equal(count(render(answer), 'strong'), 100);
  });

  it('table cells and columns are clipped before parsing; long lines are clipped', () => {
    const wide = `${'|a'.repeat(100)}|\n${'|-'.repeat(100)}|\n${'|b'.repeat(100)}|`;
    const [table] = parseMarkdown(wide);
    assert.equal(table?.t, 'table');
    if (table?.t !== 'table') return;
    assert.equal(table.head.length, LIMITS.tableColumns);
    assert.equal(
      table.head.at(-1)!.join(''),
      Array(100 - LIMITS.tableColumns + 1)
        .fill('a')
        .join('|'),
      'the extra cells join the last column',
    );
    const [long] = parseMarkdown(`|${'x'.repeat(5000)}|y|\n|-|-|`);
    assert.ok(long?.t === 'table' && (long.head[0]![0] as string).length === LIMITS.cellChars + 1);
    const [line] = parseMarkdown('y'.repeat(LIMITS.lineChars + 500));
    assert.ok(line?.t === 'p' && (line.c[0] as string).length === LIMITS.lineChars + 1 && (line.c[0] as string).endsWith('…'));
  });
});
