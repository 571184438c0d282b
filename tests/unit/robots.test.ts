/** robots.txt rules (RFC 9309) and the links and sitemap entries a website import reads. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pageLinks, sitemapEntries } from '../../lib/knowledge/crawl';
import { parseRobots } from '../../lib/knowledge/robots';

const ROBOTS = `# comment
User-agent: Googlebot
Disallow: /

User-agent: *
Disallow: /private
Disallow: /*.pdf$
Allow: /private/faq
Disallow: /search?

User-agent: svc-kb-crawler
User-agent: other
Disallow: /drafts
`;

describe('robots.txt', () => {
  const cases: Array<[string, string, string, boolean]> = [
    ['our own group wins over *', 'svc-kb-crawler/1', '/private/x', true],
    ['a group naming part of our token is not ours', 'svc', '/drafts/1', true],
    ['our own group', 'svc-kb-crawler/1', '/drafts/1', false],
    ['* group', 'somebot', '/private/x', false],
    ['longest match: Allow beats a shorter Disallow', 'somebot', '/private/faq/1', true],
    ['$ anchors the end', 'somebot', '/guide.pdf', false],
    ['$ anchors the end (not matched)', 'somebot', '/guide.pdf?x=1', true],
    ['query rules', 'somebot', '/search?q=cake', false],
    ['no rule: allowed', 'somebot', '/help', true],
  ];
  for (const [what, agent, path, allowed] of cases) {
    it(`${what}: ${agent} ${path} → ${allowed ? 'allowed' : 'refused'}`, () => {
      assert.equal(parseRobots(ROBOTS, agent).isAllowed(path), allowed);
    });
  }
  it('an empty or unreadable file allows everything', () => {
    assert.equal(parseRobots('', 'x').isAllowed('/a'), true);
    assert.equal(parseRobots('<html>not robots</html>', 'x').isAllowed('/a'), true);
  });
  it('an empty Disallow allows everything', () => {
    assert.equal(parseRobots('User-agent: *\nDisallow:\n', 'x').isAllowed('/a'), true);
  });
});

describe('links and sitemaps', () => {
  it('links are absolute http(s) addresses without fragments; nofollow and other schemes are left out; <base> counts', () => {
    const html = `<html><head><title> Help &amp; FAQ </title><base href="https://h.example/docs/"></head><body>
      <a href="a.html#x">a</a> <a href="/b">b</a> <a href="mailto:x@y">m</a> <a href="javascript:alert(1)">j</a>
      <a rel="nofollow" href="/c">c</a> <a href="https://other.example/d">d</a></body></html>`;
    const { links, title } = pageLinks(html, 'https://h.example/start');
    assert.equal(title, 'Help & FAQ');
    assert.deepEqual(links, ['https://h.example/docs/a.html', 'https://h.example/b', 'https://other.example/d']);
  });
  it('a sitemap, a sitemap index, and something else', () => {
    assert.deepEqual(sitemapEntries('<urlset><url><loc> https://h.example/a </loc></url><url><loc>/b</loc></url></urlset>', 'https://h.example/sitemap.xml'), {
      kind: 'urlset',
      urls: ['https://h.example/a', 'https://h.example/b'],
    });
    assert.deepEqual(
      sitemapEntries('<?xml version="1.0"?><sitemapindex><sitemap><loc>https://h.example/s1.xml</loc></sitemap></sitemapindex>', 'https://h.example/'),
      {
        kind: 'sitemapindex',
        urls: ['https://h.example/s1.xml'],
      },
    );
    assert.equal(sitemapEntries('<rss><channel></channel></rss>', 'https://h.example/'), null);
  });
});
