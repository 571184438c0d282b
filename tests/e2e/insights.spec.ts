import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { fixtures, screenshot, signIn } from './fixtures';

const f = fixtures();
const OCTOBER = '/insights?from=2026-10-01&to=2026-10-31';

/** Serious and critical axe violations of the page (the layout's account line is outside these pages). */
async function serious(page: Page) {
  const r = await new AxeBuilder({ page }).exclude('.account').analyze();
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join(' ')}`);
}

test.describe('insights', () => {
  test('every figure with its definition and a chart; range and channel controls; axe clean; screenshots at 1366 and 390 px', async ({ page }) => {
    await page.setViewportSize({ width: 1366, height: 900 });
    await signIn(page, f.alpha.email, f.alpha.password);
    await page.getByRole('link', { name: 'Insights' }).click();
    await expect(page.getByRole('heading', { name: 'Insights', level: 1 })).toBeVisible();
    await page.goto(OCTOBER);
    const figures = page.locator('section.insights-figure');
    await expect(figures).toHaveCount(12);
    // Honest resolution (docs/contracts.md §15): AI involved and the AI-resolved split, each with its definition.
    for (const [key, says] of [
      ['ai_involved', /at least one answer/],
      ['ai_resolved_confirmed', /liked an answer, rated the conversation 4–5, or thanked/],
      ['ai_resolved_assumed', /no sign that the answer helped/],
    ] as const) {
      const section = figures.filter({ has: page.locator(`[data-figure=${key}]`) });
      await expect(section.locator('.insights-definition')).toHaveText(says);
    }
    await expect(page.locator('[data-figure=conversations]')).toHaveText('40');
    for (const section of await figures.all()) {
      await expect(section.locator('.insights-definition')).not.toBeEmpty();
      await expect(section.locator('canvas').first()).toBeVisible();
    }
    // The channel control narrows every figure; the form keeps the range.
    await page.getByLabel('Channel').selectOption(String(f.alpha.channels[1]));
    await page.getByRole('button', { name: 'Show' }).click();
    await expect(page).toHaveURL(new RegExp(`channel_id=${f.alpha.channels[1]}`));
    await expect(page.locator('[data-figure=conversations]')).toHaveText('14');
    await page.goto(OCTOBER);
    expect(await serious(page)).toEqual([]);
    await screenshot(page, 'insights-desktop');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await expect(figures.first().locator('canvas').first()).toBeVisible();
    expect(await serious(page)).toEqual([]);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'insights-phone');
  });

  test('content gaps: groups with their questions, Add answer and Dismiss; axe clean; screenshots at 1366 and 390 px', async ({ page }) => {
    await page.setViewportSize({ width: 1366, height: 900 });
    await signIn(page, f.alpha.email, f.alpha.password);
    await page.goto('/insights/gaps?from=2026-10-01&to=2026-10-31');
    await expect(page.getByRole('heading', { name: 'Content gaps' })).toBeVisible();
    const groups = page.locator('ol.gaps > li');
    await expect(groups.first()).toBeVisible();
    await expect(groups.first().getByRole('button', { name: 'Dismiss' })).toBeVisible();
    await groups.first().getByRole('button', { name: 'Add answer' }).click();
    await expect(groups.first().getByRole('textbox', { name: 'Answer' })).toBeVisible();
    await expect(groups.first().getByRole('button', { name: 'Save answer' })).toBeVisible();
    expect(await serious(page)).toEqual([]);
    await screenshot(page, 'insights-gaps-desktop');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await expect(groups.first()).toBeVisible();
    expect(await serious(page)).toEqual([]);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'insights-gaps-phone');
  });
});
