/**
 * /knowledge in Chromium (docs/contracts.md §16): "Replace" instead of a second copy, "Previous
 * versions" with "Restore", passages to read, "Add from a website" against a site served by this
 * test (serve-app.ts allows loopback addresses) with its progress and "Re-sync", a refused address
 * that stays in the box, cards on phones; screenshots at 1366 and 390 px and axe at both.
 */
import fs from 'node:fs';
import http from 'node:http';
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { fixtures, screenshot, signIn } from './fixtures';

const f = fixtures();
test.describe.configure({ mode: 'serial' });

const SITE_PORT = Number(process.env.E2E_SITE_PORT ?? 3566);
const SITE = `http://127.0.0.1:${SITE_PORT}`;
const sitePages = new Map<string, string>();
const page = (title: string, text: string, links: string[] = []) =>
  `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`;
let site: http.Server;
/** Each page's answer waits this long (so a crawl's progress can be seen). */
let delayMs = 0;

test.beforeAll(async () => {
  sitePages.set('/', page('Beta help centre', 'Welcome to the Beta help centre.', ['/shipping', '/returns']));
  sitePages.set('/shipping', page('Shipping', 'Beta parcels reach Lisbon in four working days.'));
  sitePages.set('/returns', page('Returns', 'Beta takes returns for sixty days.'));
  site = http.createServer((req, res) => {
    const body = sitePages.get(req.url!);
    if (!body) return res.writeHead(404).end();
    setTimeout(() => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body), delayMs);
  });
  await new Promise<void>((r) => site.listen(SITE_PORT, '127.0.0.1', r));
});
test.afterAll(() => {
  site?.close();
});

async function checkBothWidths(p: Page, name: string) {
  for (const [label, width] of [
    ['desktop', 1366],
    ['phone', 390],
  ] as const) {
    await p.setViewportSize({ width, height: 900 });
    await screenshot(p, `${name}-${label}`);
    // A client-side navigation sets the title as it settles: axe reads the page once it has one.
    await expect(p).toHaveTitle(/\S/);
    // Left to their owners (issue 28 item 10): the layout's "(owner)" contrast and the "Try a question" table of app/(dashboard)/bot.
    const r = await new AxeBuilder({ page: p }).exclude('.sidebar .account').exclude('[aria-live="polite"] > .table-scroll').analyze();
    expect(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes[0]?.target}`)).toEqual([]);
    // Nothing sits off-screen: every button fits the viewport's width.
    for (const b of await p.locator('main button:visible').all()) {
      const box = await b.boundingBox();
      if (box) expect(box.x + box.width, `${await b.textContent()} at ${width} px`).toBeLessThanOrEqual(width);
    }
  }
  await p.setViewportSize({ width: 1366, height: 900 });
}

function file(name: string, text: string) {
  fs.mkdirSync('tests/artifacts', { recursive: true });
  fs.writeFileSync(`tests/artifacts/${name}`, text);
  return `tests/artifacts/${name}`;
}

test('a document with the same title is replaced, never doubled; "Restore" brings the earlier version back; passages can be read', async ({ page: p }) => {
  await signIn(p, f.beta.email, f.beta.password);
  await p.goto('/knowledge');
  const upload = p.getByRole('region', { name: 'Add a document' });
  await expect(upload.getByText('No file chosen')).toBeVisible();
  await p.getByLabel('Document', { exact: true }).setInputFiles(file('tiny.md', 'Hi there.'));
  await expect(upload.getByText('tiny.md (9 bytes)')).toBeVisible();
  await p.getByRole('button', { name: 'Upload' }).click();
  await expect(upload.getByRole('status')).toContainText('Added tiny.md (1 passage)');
  await expect(p.getByRole('row', { name: /tiny/ })).toContainText('9 bytes');

  await p
    .getByLabel('Document', { exact: true })
    .setInputFiles(file('faq.md', '# Bluebird Bakery FAQ\n\n## Birthday cakes\n\nOrder birthday cakes three days in advance.\n'));
  await p.getByRole('button', { name: 'Upload' }).click();
  await expect(upload.getByRole('status')).toContainText('Added faq.md');
  await p
    .getByLabel('Document', { exact: true })
    .setInputFiles(file('faq-2026.md', '# Bluebird Bakery FAQ\n\n## Birthday cakes\n\nOrder birthday cakes five days in advance.\n'));
  await p.getByRole('button', { name: 'Upload' }).click();
  const offer = upload.getByRole('alert');
  await expect(offer).toContainText('Bluebird Bakery FAQ (faq.md) is already in the knowledge base. Replace it with faq-2026.md?');
  await checkBothWidths(p, 'knowledge-replace-offer');
  await offer.getByRole('button', { name: 'Replace' }).click();
  await expect(upload.getByRole('status')).toContainText('Replaced with faq-2026.md');
  const rows = p.getByRole('region', { name: 'Documents' }).getByRole('row', { name: /Bluebird Bakery FAQ/ });
  const fileCell = rows.getByRole('cell').nth(1);
  await expect(rows).toHaveCount(1);
  await expect(fileCell).toHaveText('faq-2026.md');

  await p.getByRole('textbox', { name: 'Question' }).fill('How many days in advance do I order a birthday cake?');
  await p.getByRole('button', { name: 'Ask' }).click();
  await expect(p.getByTestId('try-answer')).toContainText('five days');
  await expect(p.getByTestId('try-answer')).not.toContainText('See also');

  await rows.getByText('Previous versions (1)').click();
  await checkBothWidths(p, 'knowledge-versions');
  await rows.getByRole('button', { name: /^Restore faq\.md/ }).click();
  await expect(fileCell).toHaveText('faq.md');
  await expect(rows.getByText('Previous versions (1)')).toBeVisible();
  await p.getByRole('textbox', { name: 'Question' }).fill('How many days in advance do I order a birthday cake?');
  await p.getByRole('button', { name: 'Ask' }).click();
  await expect(p.getByTestId('try-answer')).toContainText('three days');

  await rows.getByRole('link', { name: /Read the 1 passage of Bluebird Bakery FAQ/ }).click();
  const passages = p.getByRole('region', { name: /Passages of Bluebird Bakery FAQ/ });
  await expect(passages.getByRole('listitem')).toHaveCount(1);
  await expect(passages).toContainText('Order birthday cakes three days in advance.');
  await checkBothWidths(p, 'knowledge-passages');
});

test('"Add from a website" crawls in the background, shows its progress, and "Re-sync" reads it again', async ({ page: p }) => {
  await signIn(p, f.beta.email, f.beta.password);
  await p.goto('/knowledge');
  await p.getByRole('button', { name: 'Add from a website' }).click();
  const box = p.getByRole('textbox', { name: 'Website or sitemap URL' });
  await box.fill('http://no-such-host.invalid/help');
  await p.getByRole('button', { name: 'Import' }).click();
  const websites = p.getByRole('region', { name: 'Websites', exact: true });
  await expect(websites.getByRole('alert')).toContainText('host no-such-host.invalid does not resolve');
  await expect(box).toHaveValue('http://no-such-host.invalid/help');
  await checkBothWidths(p, 'knowledge-website-refused');

  await box.fill(`${SITE}/`);
  await p.getByRole('button', { name: 'Import' }).click();
  await expect(websites.getByRole('status')).toContainText(`Importing ${SITE}/`);
  const row = p.getByRole('region', { name: 'Imported websites' }).getByRole('row', { name: new RegExp(SITE) });
  await expect(row).toContainText('Imported', { timeout: 20_000 });
  await expect(row).toContainText('3 pages');
  await row.getByText('3 pages').click();
  await expect(row.getByRole('link', { name: 'Shipping' })).toBeVisible();
  await checkBothWidths(p, 'knowledge-website');

  sitePages.set('/shipping', page('Shipping', 'Beta parcels reach Lisbon in two working days.'));
  delayMs = 700;
  await row.getByRole('button', { name: `Re-sync ${SITE}/` }).click();
  await expect(row).toContainText(/Importing… \d pages? read so far/);
  await screenshot(p, 'knowledge-website-importing-desktop');
  await expect(row).toContainText('Imported', { timeout: 20_000 });
  await p.getByRole('textbox', { name: 'Question' }).fill('How long do Beta parcels take to reach Lisbon?');
  await p.getByRole('button', { name: 'Ask' }).click();
  await expect(p.getByTestId('try-answer')).toContainText('two working days');
  await row.getByRole('link', { name: 'Shipping' }).click();
  await expect(p.getByRole('region', { name: /Passages of Shipping/ })).toContainText('two working days');
});
