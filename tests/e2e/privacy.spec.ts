import { expect, test } from '@playwright/test';
import { fixtures, screenshotsAtBothWidths, signIn } from './fixtures';

const f = fixtures();

test.describe('dashboard privacy', () => {
  test('retention saved and turned off again; an unknown visitor is found to have no conversations', async ({ page }) => {
    await signIn(page, f.alpha.email, f.alpha.password);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Privacy' }).click();
    await expect(page).toHaveURL(/\/privacy$/);
    await expect(page.getByRole('heading', { name: 'Privacy', level: 1 })).toBeVisible();

    const auto = page.getByRole('checkbox', { name: 'Delete conversations automatically' });
    await expect(auto).not.toBeChecked();
    await auto.check();
    await page.getByLabel('Days after the last message').fill('3650');
    await page.getByRole('button', { name: 'Save retention' }).click();
    await expect(page.getByRole('status')).toHaveText('Saved: kept 3650 days.');
    await page.reload();
    await expect(page.getByRole('checkbox', { name: 'Delete conversations automatically' })).toBeChecked();
    await expect(page.getByLabel('Days after the last message')).toHaveValue('3650');
    await page.getByRole('checkbox', { name: 'Delete conversations automatically' }).uncheck();
    await page.getByRole('button', { name: 'Save retention' }).click();
    await expect(page.getByRole('status')).toHaveText('Saved: conversations are kept.');

    const visitor = page.getByRole('region', { name: 'A visitor’s data' });
    await page.getByLabel('Visitor email or id').fill('nobody-at-all@example.test');
    await expect(page.getByRole('button', { name: 'Erase' })).toBeDisabled();
    await page.getByRole('button', { name: 'Find' }).click();
    await expect(visitor.getByRole('status')).toHaveText('No conversations found for this visitor.');
    await expect(page.getByRole('button', { name: 'Erase' })).toBeDisabled();
    await page.getByRole('button', { name: 'Export' }).click();
    await expect(visitor.getByRole('alert')).toHaveText('No conversations found for email nobody-at-all@example.test.');
    await screenshotsAtBothWidths(page, 'privacy');
  });
});
