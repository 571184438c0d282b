import { createElement, type ReactNode } from 'react';
import { parseMarkdown, renderMarkdownTree, type Hyperscript, type RenderOptions } from '@/lib/markdown/markdown';

const h = createElement as unknown as Hyperscript<ReactNode>;

/**
 * Markdown as the widget shows it, rendered safely: React elements built from a parsed tree
 * (never innerHTML), so HTML in the text is shown as typed and only http(s)/mailto links survive.
 * Works in server and client components. `compact` renders one inline run for table cells.
 */
export function Markdown({ text, compact = false, headingOffset, className }: { text: string; className?: string } & RenderOptions) {
  const children = renderMarkdownTree(parseMarkdown(text), h, { compact, headingOffset });
  return createElement(compact ? 'span' : 'div', { className: ['md', compact ? 'md-compact' : '', className ?? ''].filter(Boolean).join(' ') }, ...children);
}
