/** robots.txt rules (RFC 9309) and the links and sitemap entries a website import reads. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pageLinks, sitemapEntries } from '../../lib/knowledge/crawl';
import { compilePattern, MAX_PATH_CHARS, MAX_ROBOTS_RULES, parseRobots, patternMatches } from '../../lib/knowledge/robots';

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
  it('wildcards: * matches any run, $ only at the end, the rest literally', () => {
    const cases: Array<[string, string, boolean]> = [
      ['/a*b*c', '/axxbyyc/z', true],
      ['/a*b*c', '/axxcyyb', false],
      ['/*.php$', '/x/y.php', true],
      ['/*.php$', '/x/y.php5', false],
      ['/a*$', '/a', true],
      ['/ab*ab$', '/ab', false],
      ['/ab*ab$', '/abab', true],
      ['/x.y+(z)?', '/x.y+(z)?q', true],
      ['/x.y', '/xzy', false],
      ['/a$b', '/a$b/c', true],
      ['***', '/anything', true],
      ['/aab*aabaab', '/aabaabaaabaab', true],
    ];
    for (const [pattern, path, expected] of cases) assert.equal(patternMatches(compilePattern(pattern), path), expected, `${pattern} ${path}`);
  });
  it('many stars against a long path: linear steps, no catastrophic backtracking (was hours with a RegExp)', () => {
    const stars = `/${'a*'.repeat(16)}b`;
    const path = `/${'a'.repeat(63)}`;
    const robots = parseRobots(`User-agent: *\nDisallow: ${stars}\nDisallow: /${'*a'.repeat(12)}X\n`, 'x');
    const started = performance.now();
    assert.equal(robots.isAllowed(path), true);
    assert.equal(robots.isAllowed(`/${'a'.repeat(35)}`), true);
    const long = `/${'a'.repeat(MAX_PATH_CHARS - 2)}b`;
    assert.equal(parseRobots(`User-agent: *\nDisallow: ${stars}\n`, 'x').isAllowed(long), false);
    assert.ok(performance.now() - started < 1000, 'hang guard');
    const steps = { n: 0 };
    assert.equal(patternMatches(compilePattern(stars), long, steps), true);
    assert.ok(steps.n <= 2 * (long.length + stars.length), `${steps.n} steps for a ${long.length}-character path`);
  });
  it('caps: rules beyond the limit are dropped, a long Disallow is cut, a long Allow ignored, a long path refused', () => {
    const many = Array.from({ length: MAX_ROBOTS_RULES }, (_, i) => `Disallow: /r${i}`).join('\n');
    const capped = parseRobots(`User-agent: *\n${many}\nDisallow: /beyond\n`, 'x');
    assert.equal(capped.isAllowed(`/r${MAX_ROBOTS_RULES - 1}`), false);
    assert.equal(capped.isAllowed('/beyond'), true);
    const longRule = parseRobots(`User-agent: *\nDisallow: /d${'x'.repeat(600)}\nAllow: /a${'x'.repeat(600)}\nDisallow: /a\n`, 'x');
    assert.equal(longRule.isAllowed(`/d${'x'.repeat(510)}`), false);
    assert.equal(longRule.isAllowed(`/a${'x'.repeat(600)}`), false);
    assert.equal(parseRobots('User-agent: *\nDisallow: /private\n', 'x').isAllowed(`/${'p'.repeat(MAX_PATH_CHARS)}`), false);
    assert.equal(parseRobots('', 'x').isAllowed(`/${'p'.repeat(MAX_PATH_CHARS)}`), true);
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
