/** The Customer API reference at /docs/api: renders every operation from our own origin, at desktop and phone width. */
import { expect, test } from '@playwright/test';

for (const [name, size] of [
  ['desktop', { width: 1366, height: 900 }],
  ['phone', { width: 390, height: 844 }],
] as const) {
  test(`API reference renders at ${size.width} px (${name})`, async ({ page, baseURL }) => {
    const offOrigin: string[] = [];
    const failures: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(baseURL!)) offOrigin.push(r.url());
    });
    page.on('pageerror', (e) => failures.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') failures.push(m.text());
    });
    await page.setViewportSize(size);
    await page.goto('/docs/api');
    await expect(page.getByRole('heading', { name: /svc Customer API/ })).toBeVisible();
    for (const path of ['/response', '/response/{response_id}', '/conversation', '/conversation/{conversation_id}']) {
      await expect(page.locator('.opblock-summary-path', { hasText: new RegExp(`^${path.replace(/[{}/]/g, '\\$&')}$`) })).toBeVisible();
    }
    // Open one operation: its parameters (with the aliases) and example are shown.
    await page.locator('.opblock-summary-path', { hasText: /^\/response$/ }).click();
    await expect(page.getByText('pageSize', { exact: true })).toBeVisible();
    await expect(page.getByText('listResponses').first()).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, 'no horizontal scrolling').toBeLessThanOrEqual(1);
    await page.screenshot({ path: `tests/artifacts/screenshots/api-docs-${name}.png`, fullPage: false });
    expect(offOrigin, 'every request stays on our origin').toEqual([]);
    expect(failures).toEqual([]);
  });
}
