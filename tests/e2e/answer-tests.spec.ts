/**
 * /bot/tests in Chromium (docs/contracts.md §20): add a test, "Run tests", see it pass; delete its
 * source on /knowledge and the automatic run marks it "Newly failing" there and in the banner on
 * /knowledge; screenshots at 1366 and 390 px. Alpha's knowledge base is left as it was found.
 */
import fs from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { fixtures, screenshotsAtBothWidths, signIn } from './fixtures';

const f = fixtures();

test('add a test, run it, see it pass; deleting its source makes it "Newly failing" with a banner on /knowledge', async ({ page: p }) => {
  // Two pages at two widths with axe, an upload, a run and the wait for the automatic one.
  test.setTimeout(120_000);
  await signIn(p, f.alpha.email, f.alpha.password);
  await p.goto('/knowledge');
  fs.mkdirSync('tests/artifacts', { recursive: true });
  fs.writeFileSync('tests/artifacts/lighthouse.md', '# Lighthouse tours\n\nThe lighthouse tour starts at 9 am every day and takes one hour.\n');
  await p.getByLabel('Document', { exact: true }).setInputFiles('tests/artifacts/lighthouse.md');
  await p.getByRole('button', { name: 'Upload' }).click();
  await expect(p.getByRole('region', { name: 'Add a document' }).getByRole('status')).toContainText('Added lighthouse.md');

  await p.goto('/bot/tests');
  await expect(p).toHaveTitle('Answer tests · svc');
  await p.getByRole('textbox', { name: 'Question' }).fill('When does the lighthouse tour start?');
  await p.getByRole('combobox', { name: 'Expect' }).selectOption('answers from');
  await p.getByRole('combobox', { name: 'Source' }).selectOption({ label: 'Lighthouse tours' });
  await p.getByRole('button', { name: 'Add test' }).click();
  const row = p.getByRole('row', { name: /When does the lighthouse tour start/ });
  await expect(row).toContainText('not run yet');
  await p.getByRole('button', { name: 'Run tests' }).click();
  await expect(row).toContainText('passed');
  await expect(row).toContainText('Lighthouse tours');
  await expect(row).toContainText('The lighthouse tour starts at 9 am');
  await screenshotsAtBothWidths(p, 'bot-tests', async (width) => {
    const axe = await new AxeBuilder({ page: p }).exclude('.sidebar .account').analyze();
    expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes[0]?.target}`)).toEqual([]);
    for (const b of await p.locator('main button:visible').all()) {
      const box = await b.boundingBox();
      if (box) expect(box.x + box.width, `${await b.textContent()} at ${width} px`).toBeLessThanOrEqual(width);
    }
  });

  await p.goto('/knowledge');
  await p.getByRole('button', { name: 'Delete lighthouse.md' }).click();
  await p.getByRole('button', { name: 'Yes, delete' }).click();
  await expect(p.getByRole('row', { name: /Lighthouse tours/ })).toHaveCount(0);
  // The automatic run follows within seconds here (serve-app.ts); the banner shows on the next load.
  await expect(async () => {
    await p.reload();
    await expect(p.getByTestId('newly-failing-banner')).toContainText('1 answer test', { timeout: 1000 });
  }).toPass({ timeout: 30_000 });
  await expect(p.getByTestId('newly-failing-banner')).toContainText('When does the lighthouse tour start?');
  await screenshotsAtBothWidths(p, 'knowledge-newly-failing');

  await p.getByRole('link', { name: 'See the answer tests' }).click();
  await expect(row).toContainText('Newly failing');
  await expect(row).toContainText('source deleted');
  await p.getByRole('button', { name: 'Remove When does the lighthouse tour start?' }).click();
  await expect(row).toHaveCount(0);
  await p.goto('/knowledge');
  await expect(p.getByTestId('newly-failing-banner')).toHaveCount(0);
});
