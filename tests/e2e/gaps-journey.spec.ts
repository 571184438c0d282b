/**
 * The content-gaps journey through the widget (issue 27, docs/contracts.md §15), on the gamma account,
 * whose knowledge base no other spec changes: visitors on a page of another origin ask questions the
 * bot declines; the owner sees them grouped on /insights/gaps with a synonym suggestion, adds an
 * answer to the biggest group, and a new visitor asking in other words gets it in the widget; the
 * suggested synonym ("postage = shipping", one click) turns a declined widget question into an
 * answered one. Screenshots and axe of the gaps page with suggestions at 1366 and 390 px.
 */
import fs from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { type Browser, expect, test } from '@playwright/test';
import { fixtures, screenshotsAtBothWidths, signIn } from './fixtures';
import { hostPage, openAndAsk } from './widget-helpers';

const f = fixtures();
const DECLINED = 'Try asking in other words';
const FAQ =
  '# Harbor Bikes FAQ\n\n## Shipping\n\nShipping a bike costs 15 euros and takes two working days.\n\n## Invoices\n\nThe invoice of every order is emailed as a PDF.\n';
const GIFT_CARDS = ['Do you sell gift cards?', 'Can I buy a gift card?', 'gift cards available?'];
const POSTAGE = ['How much is postage for a bike?', 'What is the postage on a bike?'];
const CURATED = 'Yes: gift cards from 10 to 200 euros, sold at the till.';

/** A new visitor (own browser context: no stored conversation) asks one question in the widget; returns the widget's log text. */
async function visitorAsks(browser: Browser, client: string, question: string, expected: string | RegExp) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(hostPage({ sel: 'track', val: 'stable', mode: 'client', client }));
    await openAndAsk(page, question);
    await expect(page.getByRole('log')).toContainText(expected, { timeout: 20_000 });
  } finally {
    await context.close();
  }
}

test('declined widget questions become gaps; an added answer and a suggested synonym answer new visitors in the widget', async ({ page: p, browser }) => {
  test.setTimeout(180_000);
  await signIn(p, f.gamma.email, f.gamma.password);
  await p.goto('/knowledge');
  fs.mkdirSync('tests/artifacts', { recursive: true });
  fs.writeFileSync('tests/artifacts/harbor-bikes-faq.md', FAQ);
  await p.getByLabel('Document', { exact: true }).setInputFiles('tests/artifacts/harbor-bikes-faq.md');
  await p.getByRole('button', { name: 'Upload' }).click();
  await expect(p.getByRole('region', { name: 'Add a document' }).getByRole('status')).toContainText('Added harbor-bikes-faq.md');

  await p.goto('/widget');
  await p.getByLabel('Name', { exact: true }).fill('Harbor Bikes');
  await p.getByLabel('Domains (one per line)').fill('127.0.0.1');
  await p.getByRole('button', { name: 'Create client' }).click();
  const client = (await p.getByTestId('new-client-id').textContent())!;

  for (const q of [...GIFT_CARDS, ...POSTAGE]) await visitorAsks(browser, client, q, DECLINED);

  const today = new Date().toISOString().slice(0, 10);
  await p.goto(`/insights/gaps?from=${today}&to=${today}`);
  const groups = p.locator('ol.gaps > li');
  const biggest = groups.first();
  await expect(biggest.getByRole('list', { name: 'Questions' }).getByRole('listitem')).toHaveCount(3);
  for (const q of GIFT_CARDS) await expect(biggest.getByRole('list', { name: 'Questions' })).toContainText(q);
  await expect(biggest).toContainText('3 conversations');
  const postage = groups.filter({ hasText: POSTAGE[0]! });
  const suggestion = postage.getByRole('button', { name: 'Add synonym: postage = shipping' });
  await expect(suggestion).toBeVisible();
  await expect(biggest.getByRole('button', { name: /^Add synonym/ })).toHaveCount(0);

  await screenshotsAtBothWidths(p, 'insights-gaps-suggestions', async (width) => {
    const r = await new AxeBuilder({ page: p }).include('main').analyze();
    expect(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes[0]?.target}`)).toEqual([]);
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `at ${width} px`).toBeLessThanOrEqual(0);
  });

  // The same suggestion on /knowledge's synonyms section.
  await p.goto('/knowledge');
  await expect(p.getByRole('region', { name: 'Synonyms' }).getByRole('button', { name: 'Add synonym: postage = shipping' })).toBeVisible();

  await p.goto(`/insights/gaps?from=${today}&to=${today}`);
  await biggest.getByRole('button', { name: 'Add answer' }).click();
  await biggest.getByRole('textbox', { name: 'Answer' }).fill(CURATED);
  await biggest.getByRole('button', { name: 'Save answer' }).click();
  // Answered: the group leaves the gaps.
  await expect(groups.filter({ hasText: GIFT_CARDS[0]! })).toHaveCount(0);
  await visitorAsks(browser, client, 'Do you offer gift cards?', CURATED);

  await p.reload();
  await postage.getByRole('button', { name: 'Add synonym: postage = shipping' }).click();
  await expect(p.getByRole('button', { name: 'Add synonym: postage = shipping' })).toHaveCount(0);
  await p.goto('/knowledge');
  await expect(p.getByRole('region', { name: 'Synonyms' }).getByRole('listitem').filter({ hasText: 'postage, shipping' })).toBeVisible();
  await visitorAsks(browser, client, POSTAGE[0]!, '15 euros');
});
