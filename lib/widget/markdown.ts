/**
 * Safe Markdown for answers: builds DOM nodes (never innerHTML), so no raw HTML can run.
 * Links only for http, https and mailto; images become plain links (no remote images).
 */
const SAFE_URL = /^(https?:|mailto:)/i;

function inline(text: string, out: Node[]): void {
  const re = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*|_[^_\s][^_]*_)|(!?\[[^\]]*\]\([^)\s]+\))|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)));
    const t = m[0];
    if (m[1]) {
      const c = document.createElement('code'); c.textContent = t.slice(1, -1); out.push(c);
    } else if (m[2]) {
      const b = document.createElement('strong');
      const kids: Node[] = []; inline(t.slice(2, -2), kids); kids.forEach((k) => b.appendChild(k)); out.push(b);
    } else if (m[3]) {
      const i = document.createElement('em'); const kids: Node[] = []; inline(t.slice(1, -1), kids); kids.forEach((k) => i.appendChild(k)); out.push(i);
    } else if (m[4]) {
      const lm = /^(!?)\[([^\]]*)\]\(([^)\s]+)\)$/.exec(t)!;
      out.push(link(lm[2] || lm[3]!, lm[3]!));
    } else {
      out.push(link(t, t));
    }
    last = m.index + t.length;
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
}

function link(label: string, href: string): Node {
  if (!SAFE_URL.test(href)) return document.createTextNode(label);
  const a = document.createElement('a');
  a.href = href;
  a.textContent = label;
  a.target = '_blank';
  a.rel = 'noopener noreferrer nofollow';
  return a;
}

function para(tag: string, text: string): HTMLElement {
  const e = document.createElement(tag);
  const kids: Node[] = [];
  inline(text, kids);
  kids.forEach((k) => e.appendChild(k));
  return e;
}

export function renderMarkdown(src: string): DocumentFragment {
  const frag = document.createDocumentFragment();
  const lines = src.replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (/^```/.test(line)) {
      const code: string[] = [];
      i++;
      while (i < lines.length && !/^```/.test(lines[i]!)) code.push(lines[i++]!);
      i++;
      const pre = document.createElement('pre'); const c = document.createElement('code');
      c.textContent = code.join('\n'); pre.appendChild(c); frag.appendChild(pre);
      continue;
    }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) { frag.appendChild(para(`h${Math.min(6, h[1]!.length + 2)}`, h[2]!)); i++; continue; }
    if (/^\s*>/.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i]!)) quoted.push(lines[i++]!.replace(/^\s*> ?/, ''));
      const bq = document.createElement('blockquote'); bq.appendChild(renderMarkdown(quoted.join('\n'))); frag.appendChild(bq);
      continue;
    }
    const listRe = /^\s*([-*+]|\d+[.)])\s+(.*)$/;
    if (listRe.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = document.createElement(ordered ? 'ol' : 'ul');
      while (i < lines.length && listRe.test(lines[i]!)) list.appendChild(para('li', listRe.exec(lines[i++]!)![2]!));
      frag.appendChild(list);
      continue;
    }
    if (line.trim() === '') { i++; continue; }
    const text: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== '' && !/^(```|#{1,6}\s|\s*>|\s*([-*+]|\d+[.)])\s)/.test(lines[i]!)) text.push(lines[i++]!);
    frag.appendChild(para('p', text.join('\n')));
  }
  return frag;
}
