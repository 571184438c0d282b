/**
 * Render time of hostile visitor questions (tests/fixtures/hostile-markdown.ts) through the
 * dashboard's Markdown component, as the transcript renders them on the server. One line each.
 *   node --import tsx tests/bench/markdown-render.ts [repeats]
 */
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { Markdown } from '../../app/(dashboard)/_components/Markdown';
import { hostileMarkdown } from '../fixtures/hostile-markdown';

const repeats = Number(process.argv[2] ?? 3);
let total = 0;
for (const { name, text } of hostileMarkdown) {
  let best = Infinity;
  let error = '';
  for (let r = 0; r < repeats; r++) {
    const t = performance.now();
    try {
      renderToStaticMarkup(createElement(Markdown, { text }));
    } catch (e) {
      error = `${(e as Error).name}: ${(e as Error).message}`.slice(0, 60);
    }
    best = Math.min(best, performance.now() - t);
  }
  total += best;
  console.log(`${best.toFixed(1).padStart(9)} ms  ${String(text.length).padStart(5)} chars  ${name}${error ? `  → ${error}` : ''}`);
}
console.log(`${total.toFixed(1).padStart(9)} ms  total (best of ${repeats} each)`);
