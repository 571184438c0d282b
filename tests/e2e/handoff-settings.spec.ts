/**
 * /bot's "Handoff" section and /profile's email notification in Chromium (docs/contracts.md §14
 * "office hours" and "notifications"): a refused save names the field and keeps what was typed; a
 * saved one survives a reload; screenshots at 1366 and 390 px; no serious or critical axe violations.
 */
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { fixtures, screenshotsAtBothWidths, signIn } from './fixtures';

const f = fixtures();
test.describe.configure({ mode: 'serial' });

async function shots(page: Page, name: string) {
  await screenshotsAtBothWidths(page, name, async (width) => {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${name} at ${width} px scrolls sideways`).toBeLessThanOrEqual(0);
  });
}

async function seriousAxe(page: Page, selector: string): Promise<string[]> {
  const r = await new AxeBuilder({ page }).include(selector).analyze();
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

test('/bot Handoff: a refused save names the field and keeps the input; a good one is saved', async ({ page }) => {
  await signIn(page, f.beta.email, f.beta.password);
  await page.goto('/bot');
  const section = page.getByRole('region', { name: 'Handoff' });
  await expect(section.getByLabel('Visitors can ask for a person')).toBeChecked();
  await expect(section.getByLabel('Time zone')).toHaveValue('UTC');
  for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']) {
    await expect(section.getByLabel(day, { exact: true })).toBeChecked();
    await expect(section.getByLabel(`${day} opens`)).toHaveValue('00:00');
    await expect(section.getByLabel(`${day} closes`)).toHaveValue('00:00');
  }

  await section.getByLabel('Time zone').fill('Mars/Olympus');
  await section.getByLabel('Wednesday opens').fill('18:00');
  await section.getByLabel('Wednesday closes').fill('09:00');
  await section.getByLabel('Away text').fill('Back at nine.');
  await section.getByRole('button', { name: 'Save handoff settings' }).click();
  const alert = section.getByRole('alert');
  await expect(alert).toContainText('Time zone: must be an IANA time zone');
  await expect(alert).toContainText('Wednesday closes: must close after it opens');
  await expect(section.getByLabel('Time zone')).toHaveValue('Mars/Olympus');
  await expect(section.getByLabel('Wednesday opens')).toHaveValue('18:00');
  await expect(section.getByLabel('Away text')).toHaveValue('Back at nine.');
  expect(await seriousAxe(page, 'main')).toEqual([]);

  await section.getByLabel('Time zone').fill('Europe/Berlin');
  await section.getByLabel('Wednesday opens').fill('09:00');
  await section.getByLabel('Wednesday closes').fill('18:00');
  await section.getByLabel('Sunday', { exact: true }).uncheck();
  await section.getByRole('button', { name: 'Save handoff settings' }).click();
  await expect(section.getByRole('status')).toHaveText('Handoff settings saved.');
  await expect(section.getByLabel('Sunday', { exact: true })).not.toBeChecked();
  await expect(section.getByLabel('Visitors can ask for a person')).toBeChecked();
  await expect(section.getByLabel('Time zone')).toHaveValue('Europe/Berlin');
  await section.scrollIntoViewIfNeeded();
  await shots(page, 'bot-handoff');

  await page.reload();
  const again = page.getByRole('region', { name: 'Handoff' });
  await expect(again.getByLabel('Time zone')).toHaveValue('Europe/Berlin');
  await expect(again.getByLabel('Wednesday closes')).toHaveValue('18:00');
  await expect(again.getByLabel('Sunday', { exact: true })).not.toBeChecked();
  await expect(again.getByLabel('Away text')).toHaveValue('Back at nine.');
  expect(await seriousAxe(page, 'main')).toEqual([]);

  // Back to the defaults, so the other specs' widget on this account is always attended.
  await again.getByLabel('Time zone').fill('UTC');
  await again.getByLabel('Wednesday opens').fill('00:00');
  await again.getByLabel('Wednesday closes').fill('00:00');
  await again.getByLabel('Sunday', { exact: true }).check();
  await again.getByLabel('Away text').fill('');
  await again.getByRole('button', { name: 'Save handoff settings' }).click();
  await expect(again.getByRole('status')).toHaveText('Handoff settings saved.');
});

test('/profile: "Email me when a conversation waits" is on by default and saved', async ({ page }) => {
  await signIn(page, f.beta.email, f.beta.password);
  await page.goto('/profile');
  const box = page.getByLabel('Email me when a conversation waits');
  await expect(box).toBeChecked();
  await box.uncheck();
  await page.getByRole('button', { name: 'Save notifications' }).click();
  await expect(page.getByRole('status')).toHaveText('Saved: no emails about waiting conversations.');
  await expect(page.getByLabel('Email me when a conversation waits')).not.toBeChecked();
  await page.reload();
  await expect(page.getByLabel('Email me when a conversation waits')).not.toBeChecked();
  await page.getByLabel('Email me when a conversation waits').check();
  await page.getByRole('button', { name: 'Save notifications' }).click();
  await expect(page.getByRole('status')).toHaveText('Saved: you get an email when a conversation waits.');
  expect(await seriousAxe(page, 'main')).toEqual([]);
  await shots(page, 'profile-notifications');
});
