import { expect, test, type Page } from '@playwright/test';
import { askAsVisitor, collectConsoleErrors, fixtures, screenshot, signIn } from './fixtures';

/**
 * What a newcomer does on the first day: sign in, then every dashboard page at a laptop's and a
 * phone's width, each with a screenshot (tests/artifacts/screenshots/journey-*.png) and the checks
 * that matter: no console errors, no horizontal overflow, headers and table cells never clipped or
 * broken mid-word, sane page heights, Markdown rendered and never executed.
 */
const f = fixtures();
const XSS_QUESTION = [
  'How do I export? Open **Account → Export**, then see [the guide](javascript:window.__xss=1) or <img src=x onerror="window.__xss=1">',
  '<script>window.__xss=1</script> [x](JaVaScRiPt:window.__xss=1) <svg onload="window.__xss=1"></svg> <a href="javascript:window.__xss=1">link</a>',
].join('\n\n');

const WIDTHS = [
  { label: 'desktop', width: 1366, height: 900 },
  { label: 'phone', width: 390, height: 844 },
] as const;

type Layout = { scrollWidth: number; clientWidth: number; height: number; clipped: string[]; midWord: string[]; overlaps: string[] };

/** Layout facts of the current page, measured in the browser. */
async function measure(page: Page): Promise<Layout> {
  return page.evaluate(() => {
    const visible = (e: Element) => {
      const r = e.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden';
    };
    const clipped: string[] = [];
    // headings, table headers (and their Grid.js content boxes), buttons, links in nav: text fits its box
    for (const e of document.querySelectorAll('h1, h2, th, th .gridjs-th-content, .nav a, .btn, .segmented a, label')) {
      if (!visible(e)) continue;
      if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible')
        clipped.push(`${e.tagName.toLowerCase()} "${e.textContent?.trim()}" ${e.scrollWidth}>${e.clientWidth}`);
    }
    // a word whose letters land on two lines is broken mid-word (table cells, headers, metadata)
    const midWord: string[] = [];
    const scopes = document.querySelectorAll('td, th, .msg .meta, .card, .chart-axis, .segmented a, .nav a');
    for (const scope of scopes) {
      if (!visible(scope)) continue;
      // free text (titles, questions, answers) may wrap after a hyphen or slash, as prose does
      const prose = scope.matches('td[data-column-id="title"], td[data-column-id="question"], td[data-column-id="answer"]');
      const walker = document.createTreeWalker(scope, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const text = n.textContent ?? '';
        // tokens longer than 24 characters (URLs, code) may break where a narrow column needs it
        for (const token of text.matchAll(/\S+/g)) {
          if (token[0].length < 2 || token[0].length > 24) continue;
          const parts = prose ? [...token[0].matchAll(/[^\-/]+[-/]?/g)] : [token];
          for (const m of parts) {
            if (m[0].length < 2) continue;
            const start = token.index! + (prose ? m.index! : 0);
            const range = document.createRange();
            range.setStart(n, start);
            range.setEnd(n, start + m[0].length);
            const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
            if (lines.size > 1) midWord.push(`"${m[0]}" in <${scope.tagName.toLowerCase()}>`);
          }
        }
      }
    }
    // sort icons never sit on their header's text
    const overlaps: string[] = [];
    for (const th of document.querySelectorAll('th.gridjs-th')) {
      const text = th.querySelector('.th-label');
      const btn = th.querySelector('.sort-icon');
      if (!text || !btn || !visible(btn)) continue;
      const range = document.createRange();
      range.selectNodeContents(text);
      const a = range.getBoundingClientRect();
      const b = btn.getBoundingClientRect();
      if (a.right > b.left + 0.5 && a.left < b.right && a.bottom > b.top && a.top < b.bottom)
        overlaps.push(`${text.textContent} (text ends ${a.right.toFixed(1)}, icon starts ${b.left.toFixed(1)})`);
      if (a.right > th.getBoundingClientRect().right) overlaps.push(`${text.textContent} leaves its header`);
    }
    // tables fit their panel: no sideways scrolling inside the Grid.js wrapper
    for (const w of document.querySelectorAll('.gridjs-wrapper')) {
      if (w.scrollWidth > w.clientWidth + 1) overlaps.push(`a table scrolls sideways (${w.scrollWidth} > ${w.clientWidth})`);
    }
    const d = document.documentElement;
    return { scrollWidth: d.scrollWidth, clientWidth: d.clientWidth, height: d.scrollHeight, clipped, midWord: [...new Set(midWord)], overlaps };
  });
}

test.describe('newcomer journey', () => {
  test.setTimeout(240_000);

  test('sign in, then every dashboard page at 1366×900 and 390×844', async ({ page, baseURL }) => {
    const consoleErrors = collectConsoleErrors(page);
    const failed: string[] = [];
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    });
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });

    // a visitor asks: one answer from the knowledge base (Markdown), one hostile question
    const conversation = await askAsVisitor(baseURL!, f.widget, ['What are the opening hours of Alpha support?', XSS_QUESTION]);

    // the sign-in page at both widths
    for (const { label, width, height } of WIDTHS) {
      await page.setViewportSize({ width, height });
      await page.goto('/login');
      await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
      await screenshot(page, `journey-login-${label}`);
      const m = await measure(page);
      expect.soft(m.scrollWidth, `/login at ${width}px: the document is wider than the viewport`).toBeLessThanOrEqual(m.clientWidth);
      expect.soft(m.clipped, `/login at ${width}px: clipped text`).toEqual([]);
      expect.soft(m.height, `/login at ${width}px: taller than the screen`).toBeLessThanOrEqual(height);
    }
    await page.setViewportSize({ width: 1366, height: 900 });
    await signIn(page, f.alpha.email, f.alpha.password);
    await expect(page.getByRole('heading', { name: 'Overview' })).toBeVisible();

    const pages: Array<[string, string]> = [
      ['overview', '/'],
      ['conversations', '/conversations'],
      ['transcript', `/conversations/${conversation}`],
      ['responses', '/responses'],
      ['api-keys', '/api-keys'],
      ['widget', '/widget'],
      ['knowledge', '/knowledge'],
    ];
    // pages other tracks add (bot settings, webhooks) join the journey as soon as they exist
    for (const extra of ['/bot', '/webhooks']) {
      const r = await page.request.get(extra, { maxRedirects: 0 });
      if (r.status() === 200) pages.push([extra.slice(1).replace('/', '-'), extra]);
    }

    const heights: Record<string, number> = {};
    for (const { label, width, height } of WIDTHS) {
      await page.setViewportSize({ width, height });
      for (const [name, path] of pages) {
        await page.goto(path);
        await expect(page.locator('h1').first()).toBeVisible();
        if (name === 'conversations' || name === 'responses') {
          await expect(page.locator('.gridjs-tbody tr').first()).toBeVisible();
          await expect(page.getByTestId('table-summary')).toContainText('Showing 1–15');
        }
        await page.evaluate(() => document.fonts.ready);
        await screenshot(page, `journey-${name}-${label}`);
        if (label === 'phone') await page.screenshot({ path: `tests/artifacts/screenshots/journey-${name}-phone-first-screen.png` });
        const m = await measure(page);
        heights[`${name}-${label}`] = m.height;
        expect.soft(m.scrollWidth, `${path} at ${width}px: the document is wider than the viewport`).toBeLessThanOrEqual(m.clientWidth);
        expect.soft(m.clipped, `${path} at ${width}px: clipped text`).toEqual([]);
        expect.soft(m.midWord, `${path} at ${width}px: words broken across lines`).toEqual([]);
        expect.soft(m.overlaps, `${path} at ${width}px: sort icons over header text, tables wider than their panel`).toEqual([]);
        await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
      }
    }
    console.log('page heights', JSON.stringify(heights));
    // the overview fits a laptop screen; 15 table rows on a phone are cards, not a 12,000 px column
    expect(heights['overview-desktop']).toBeLessThanOrEqual(900);
    expect(heights['conversations-phone']).toBeLessThan(3200);
    expect(heights['responses-phone']).toBeLessThan(4200);
    expect(heights['conversations-desktop']).toBeLessThan(1800);

    // in between (a small laptop, a tablet) the tables still fit: low-priority columns give way
    for (const width of [1024, 768, 600]) {
      await page.setViewportSize({ width, height: 900 });
      for (const path of ['/conversations', '/responses']) {
        await page.goto(path);
        await expect(page.locator('.gridjs-tbody tr').first()).toBeVisible();
        const m = await measure(page);
        expect.soft(m.scrollWidth, `${path} at ${width}px: the document is wider than the viewport`).toBeLessThanOrEqual(m.clientWidth);
        expect.soft([...m.clipped, ...m.midWord, ...m.overlaps], `${path} at ${width}px`).toEqual([]);
      }
    }

    // the overview's chart range: presets and from–to, kept in the URL
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Chart range' }).getByRole('link', { name: 'All time' }).click();
    await expect(page).toHaveURL(/\/\?range=all$/);
    await expect(page.getByRole('heading', { name: /all time, UTC/ })).toBeVisible();
    await expect(page.locator('.bars .bar').first()).toHaveAttribute('title', /^2026-10-01: \d+ responses?$/);
    await page.getByLabel('From', { exact: true }).fill('2026-10-01');
    await page.getByLabel('To', { exact: true }).fill('2026-10-07');
    await page.getByRole('button', { name: 'Show' }).click();
    await expect(page).toHaveURL(/\?from=2026-10-01&to=2026-10-07$/);
    await expect(page.locator('.bars .bar')).toHaveCount(7);
    await screenshot(page, 'journey-overview-range-desktop');
    await page.goBack();
    await expect(page).toHaveURL(/\/\?range=all$/);

    // headers of the tables at 1366: full text, e.g. "Created (UTC)" not cut
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.goto('/conversations');
    for (const name of ['Title', 'Status', 'Channel', 'Responses', 'Created (UTC)', 'Updated (UTC)']) {
      await expect(page.locator('th.gridjs-th .gridjs-th-content').getByText(name, { exact: true })).toBeVisible();
    }
    await page.goto('/responses');
    for (const name of ['Question', 'Answer', 'Channel', 'Likes', 'Dislikes', 'Comments', 'Created (UTC)']) {
      await expect(page.locator('th.gridjs-th .gridjs-th-content').getByText(name, { exact: true })).toBeVisible();
    }

    // Markdown renders, safely: in the transcript and in the responses table
    await page.goto(`/conversations/${conversation}`);
    const question = page.locator('.msg.user .md', { hasText: 'How do I export?' });
    await expect(question.locator('strong')).toHaveText('Account → Export');
    await expect(question).toContainText('<img src=x onerror="window.__xss=1">');
    await expect(question).toContainText('<script>window.__xss=1</script>');
    await expect(page.locator('.md img, .md script, .md svg, .md iframe')).toHaveCount(0);
    await expect(page.locator('a[href^="javascript" i]')).toHaveCount(0);
    const answer = page.locator('article', { hasText: 'What are the opening hours' }).locator('.msg.assistant .md');
    await expect(answer).toContainText('Monday to Friday');
    await expect(answer).not.toContainText('##');
    await page.goto('/responses?q=Account');
    await expect(page.getByTestId('table-summary')).toContainText('1 response');
    const cell = page.locator('td[data-column-id="question"]').first();
    await expect(cell.locator('strong')).toHaveText('Account → Export');
    await expect(cell).toContainText('<img src=x onerror=');
    await expect(page.locator('td img, td script, td svg')).toHaveCount(0);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(dialogs).toEqual([]);

    // the favicon is served (no 404 in the console on any page)
    expect((await page.request.get('/favicon.ico')).status()).toBe(200);
    const icons = await page.locator('link[rel="icon"]').evaluateAll((ls) => ls.map((l) => (l as HTMLLinkElement).href));
    expect(icons.length).toBeGreaterThanOrEqual(1);
    for (const href of icons) expect((await page.request.get(href)).status(), href).toBe(200);
    expect(failed).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
