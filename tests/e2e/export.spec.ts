import fs from 'node:fs';
import { expect, test } from '@playwright/test';
import { fixtures, signIn } from './fixtures';

const f = fixtures();

test.describe('dashboard export', () => {
  test('the Export links download the current search and sort, all pages, as NDJSON and CSV', async ({ page }) => {
    await signIn(page, f.alpha.email, f.alpha.password);
    await page.goto('/conversations');
    const summary = page.getByTestId('table-summary');
    await page.getByLabel('Search').fill('refund');
    await expect(summary).toHaveText('Showing 1–8 of 8 conversations');
    await page.locator('th', { hasText: 'Responses' }).click();
    await expect(page).toHaveURL(/sort=response_count/);

    const [ndjson] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-ndjson').click()]);
    expect(ndjson.suggestedFilename()).toMatch(/^conversations-\d{8}-\d{6}\.ndjson$/);
    const lines = fs
      .readFileSync((await ndjson.path())!, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(8);
    for (const l of lines) expect(`${l.title} ${l.channel_name}`.toLowerCase()).toContain('refund');
    const counts = lines.map((l) => l.response_count as number);
    expect(counts).toEqual([...counts].sort((a, b) => b - a)); // a number column's first click: most first

    // Responses: no filter, more rows than one table page.
    await page.goto('/responses');
    await expect(summary).toContainText('Showing 1–15 of');
    const total = Number(/of (\d+) responses/.exec((await summary.textContent()) ?? '')?.[1]);
    expect(total).toBeGreaterThan(15);
    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
    expect(csv.suggestedFilename()).toMatch(/^responses-\d{8}-\d{6}\.csv$/);
    const rows = fs
      .readFileSync((await csv.path())!, 'utf8')
      .split('\r\n')
      .filter(Boolean);
    expect(rows[0]).toBe('response_id,id,question,answer,channel_id,conversation_id,created_at,likes,dislikes,comments,declined');
    expect(rows).toHaveLength(total + 1);
  });
});
