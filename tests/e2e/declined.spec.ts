import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { askAsVisitor, fixtures, screenshotsAtBothWidths, signIn } from './fixtures';

/**
 * docs/contracts.md §15 "declined": the responses table marks declined answers with a badge and
 * filters them (All / Declined / Answered, kept in the URL); the inbox transcript badges every
 * declined AI answer by the stored flag.
 */
const f = fixtures();
const NOTHING = ['How do I sell my car?', 'Can you tune my piano?'];
const ANSWERED = 'What are the opening hours of Alpha support?';

test('the responses table badges and filters declined answers; the inbox marks each one', async ({ page, baseURL }) => {
  const conversationId = await askAsVisitor(baseURL!, f.widget, [...NOTHING, ANSWERED]);
  await signIn(page, f.alpha.email, f.alpha.password);
  await page.goto('/responses');
  const summary = page.getByTestId('table-summary');
  await expect(summary).toContainText('responses');
  await page.getByLabel('Declined', { exact: true }).selectOption({ label: 'Declined' });
  await expect(page).toHaveURL(/[?&]declined=true/);
  const rows = page.locator('.gridjs-tbody tr');
  await expect(rows.first()).toContainText('Declined');
  const n = await rows.count();
  expect(n).toBeGreaterThanOrEqual(NOTHING.length);
  for (let i = 0; i < n; i++) await expect(rows.nth(i).locator('.badge.declined')).toHaveText('Declined');
  // the filter survives a reload (it lives in the URL)
  await page.reload();
  await expect(page.getByLabel('Declined', { exact: true })).toHaveValue('true');
  await expect(rows.first().locator('.badge.declined')).toBeVisible();
  await screenshotsAtBothWidths(page, 'declined-responses', async (width) => {
    await expect(page).toHaveTitle(/\S/); // the title streams in after the page (Next's metadata)
    const axe = await new AxeBuilder({ page }).analyze();
    const bad = axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
    expect(bad, `axe at ${width} px`).toEqual([]);
  });
  await page.getByLabel('Declined', { exact: true }).selectOption({ label: 'Answered' });
  await expect(page).toHaveURL(/[?&]declined=false/);
  await expect(rows.first()).toBeVisible();
  await expect(page.locator('.gridjs-tbody .badge.declined')).toHaveCount(0);

  await page.goto(`/inbox/${conversationId}`);
  const transcript = page.getByRole('region', { name: 'Transcript' });
  await expect(transcript.locator('.badge', { hasText: 'Declined' })).toHaveCount(NOTHING.length);
  // the AI's Markdown is rendered as the widget renders it (its source in bold), never shown raw
  const answer = transcript.locator('.md').last();
  await expect(answer.locator('strong').first()).toBeVisible();
  await expect(answer).not.toContainText('**');
  await expect(page.getByRole('region', { name: 'Summary' })).toContainText('From Alpha FAQ: Opening hours Alpha support is open');
  await screenshotsAtBothWidths(page, 'inbox-transcript-markdown');
});
