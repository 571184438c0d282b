import { Parser } from 'htmlparser2';

/** The links of an HTML page (absolute, http/https, without fragments), and its <title>. */
export function pageLinks(html: string, base: string): { links: string[]; title: string } {
  const links = new Set<string>();
  let title = '';
  let inTitle = false;
  let baseHref = base;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'base' && attrs.href) baseHref = absolute(attrs.href, base) ?? base;
        if (name === 'title') inTitle = true;
        if (name === 'a' && attrs.href && !/\bnofollow\b/i.test(attrs.rel ?? '')) {
          const href = absolute(attrs.href, baseHref);
          if (href) links.add(href);
        }
      },
      ontext(text) {
        if (inTitle && title.length < 300) title += text;
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return { links: [...links], title: title.replace(/\s+/g, ' ').trim() };
}

/** The page addresses of a sitemap (`<urlset>`) or the sitemaps of a sitemap index, or null when not a sitemap. */
export function sitemapEntries(xml: string, base: string): { kind: 'urlset' | 'sitemapindex'; urls: string[] } | null {
  let kind: 'urlset' | 'sitemapindex' | null = null;
  const urls: string[] = [];
  let inLoc = false;
  let loc = '';
  const parser = new Parser(
    {
      onopentag(name) {
        const local = name.replace(/^.*:/, '');
        if (!kind && (local === 'urlset' || local === 'sitemapindex')) kind = local;
        if (local === 'loc') {
          inLoc = true;
          loc = '';
        }
      },
      ontext(text) {
        if (inLoc) loc += text;
      },
      onclosetag(name) {
        if (name.replace(/^.*:/, '') === 'loc') {
          inLoc = false;
          const href = absolute(loc.trim(), base);
          if (href) urls.push(href);
        }
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(xml);
  parser.end();
  return kind ? { kind, urls } : null;
}

/** `href` resolved against `base`, http(s) only, fragment dropped; null when it is no such address. */
export function absolute(href: string, base: string): string | null {
  try {
    const u = new URL(href, base);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    u.hash = '';
    return u.toString();
  } catch {
    return null;
  }
}
