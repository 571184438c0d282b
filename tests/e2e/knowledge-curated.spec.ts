/**
 * Curated answers on /knowledge in Chromium (docs/contracts.md §15): an answer saved with "Add answer"
 * on the gaps is listed with its questions, edited in place ("Save answer") and removed;
 * screenshots and axe at 1366 and 390 px.
 */
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { fixtures, screenshotsAtBothWidths, signIn } from './fixtures';

const f = fixtures();

test('an answer added on the gaps is listed on /knowledge, edited and removed', async ({ page: p }) => {
  await signIn(p, f.alpha.email, f.alpha.password);
  await p.goto('/insights/gaps?from=2026-10-01&to=2026-10-31');
  const group = p.locator('ol.gaps > li').first();
  const asked = (await group.locator('li').first().textContent())?.trim() ?? '';
  await group.getByRole('button', { name: 'Add answer' }).click();
  await group.getByRole('textbox', { name: 'Answer' }).fill('First draft of the curated answer.');
  await group.getByRole('button', { name: 'Save answer' }).click();

  await p.goto('/knowledge');
  const section = p.getByRole('region', { name: 'Curated answers' });
  const entry = section.getByRole('listitem').filter({ hasText: 'First draft of the curated answer.' });
  await expect(entry).toBeVisible();
  if (asked) await expect(entry.getByRole('list', { name: 'Questions' })).toContainText(asked.slice(0, 20));
  await entry.getByRole('button', { name: /^Edit / }).click();
  await section.getByRole('textbox', { name: 'Answer' }).fill('');
  await section.getByRole('button', { name: 'Save answer' }).click();
  await expect(section.getByRole('alert')).toContainText('Answer: write the answer the bot should give.');
  await section.getByRole('textbox', { name: 'Answer' }).fill('The edited curated answer.');
  await section.getByRole('button', { name: 'Save answer' }).click();
  const edited = section.getByRole('listitem').filter({ hasText: 'The edited curated answer.' });
  await expect(edited).toBeVisible();

  await screenshotsAtBothWidths(p, 'knowledge-curated', async (width) => {
    const r = await new AxeBuilder({ page: p }).include('main section').exclude('[aria-live="polite"] > .table-scroll').analyze();
    expect(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes[0]?.target}`)).toEqual([]);
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `at ${width} px`).toBeLessThanOrEqual(0);
  });

  await edited.getByRole('button', { name: /^Remove / }).click();
  await expect(section.getByText('No curated answers yet.')).toBeVisible();
});
