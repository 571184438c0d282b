/**
 * Answers in the widget: the shared dialect (lib/markdown) built into DOM elements, never
 * innerHTML, so no raw HTML can run; text goes in as text nodes and attributes only as the
 * parser's safe values (http(s)/mailto links, list starts, class names).
 */
import { parseMarkdown, renderMarkdownTree, type Hyperscript } from '../markdown/markdown';

const h: Hyperscript<Node> = (type, props, ...children) => {
  const e = document.createElement(type);
  for (const [k, v] of Object.entries(props ?? {})) e.setAttribute(k === 'className' ? 'class' : k, String(v));
  e.append(...children);
  return e;
};

export function renderMarkdown(src: string): DocumentFragment {
  const frag = document.createDocumentFragment();
  frag.append(...renderMarkdownTree(parseMarkdown(src), h));
  return frag;
}
