/** How a passage is cited (lib/answers/engine.ts citationTitle): the knowledge base's by title, the visitor's own file as theirs. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { citationTitle } from '../../lib/answers/engine';

describe('citationTitle', () => {
  const cases: Array<[string, { title: string; filename: string; visitor_file: boolean }, string]> = [
    ['a knowledge-base document by its title', { title: 'Orders', filename: 'order.pdf', visitor_file: false }, 'Orders'],
    ['an untitled knowledge-base document by its file name', { title: '', filename: 'faq.md', visitor_file: false }, 'faq.md'],
    ["the visitor's attachment as their file, whatever its title", { title: 'order', filename: 'order.pdf', visitor_file: true }, 'your file order.pdf'],
  ];
  for (const [name, passage, expected] of cases) it(name, () => assert.equal(citationTitle(passage), expected));
});
