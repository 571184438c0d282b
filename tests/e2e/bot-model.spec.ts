import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { startFakeModel, type FakeModel } from '../fixtures/fake-model';
import { fixtures, screenshot, signIn } from './fixtures';

const f = fixtures();
const KEY = 'sk-e2e-4d1f7b';

/** The page's own content (the shared header's contrast is issue 28 item 10, another change). */
const serious = async (page: Page) =>
  (await new AxeBuilder({ page }).include('main').analyze()).violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes[0]?.html}`);

/** No operator settings or CLI flags on a customer page (issue 28 item 11). */
async function expectNoOperatorJargon(page: Page) {
  const text = (await page.locator('main').textContent()) ?? '';
  for (const word of ['LLM_', 'SVC_ENV', 'OUTBOUND_', '--']) expect(text, word).not.toContain(word);
}

test.describe('/bot: the account own model', () => {
  let fake: FakeModel;
  test.beforeAll(async () => {
    fake = await startFakeModel({ key: KEY });
  });
  test.afterAll(async () => {
    await fake.close();
  });

  test('without a model the page says what the built-in engine does; connect, test, save (the key never shown again), disconnect; both widths, axe clean', async ({
    page,
  }) => {
    await page.setViewportSize({ width: 1366, height: 900 });
    await signIn(page, f.beta.email, f.beta.password);
    await page.goto('/bot');
    await expect(page.getByRole('heading', { name: 'Your model' })).toBeVisible();
    await expect(page.getByTestId('engine-summary')).toContainText(
      'No model is connected, so the built-in engine answers: it quotes the best-matching passage',
    );
    await expect(page.getByTestId('model-status')).toContainText('Not connected.');
    await expectNoOperatorJargon(page);
    expect(await serious(page)).toEqual([]);
    await screenshot(page, 'bot-model-none-desktop');

    // A refused address: the message says why, and the form keeps what was typed.
    await page.getByLabel('Base URL').fill('ftp://models.example/v1');
    await page.getByLabel('API key').fill(KEY);
    await page.getByRole('button', { name: 'Save model' }).click();
    await expect(page.locator('main').getByRole('alert')).toHaveText('Base URL: must use http or https, not ftp.');
    await expect(page.getByLabel('Base URL')).toHaveValue('ftp://models.example/v1');
    await expect(page.getByLabel('API key')).toHaveValue(KEY);

    await page.getByLabel('Base URL').fill(fake.url);
    await page.getByLabel('Embedding model').fill('fake-embed');
    await page.getByRole('button', { name: 'Test connection' }).click();
    const result = page.getByTestId('test-result');
    await expect(result).toContainText('The connection works.');
    await expect(result).toContainText('Chat: works');
    await expect(result).toContainText('Embeddings: works — model fake-embed answered (256 dimensions).');
    await screenshot(page, 'bot-model-tested-desktop');

    await page.getByRole('button', { name: 'Save model' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Model saved.' })).toBeVisible();
    await page.reload();
    await expect(page.getByTestId('model-status')).toContainText(`Connected: answers are written by your model at ${fake.url}`);
    await expect(page.getByTestId('key-status')).toHaveText('A key is stored (encrypted). It is never shown again.');
    await expect(page.getByLabel('API key')).toHaveValue('');
    expect(await page.content()).not.toContain(KEY);
    await expect(page.getByTestId('engine-summary')).toContainText('written by your own model');
    await expectNoOperatorJargon(page);
    expect(await serious(page)).toEqual([]);
    await screenshot(page, 'bot-model-connected-desktop');

    // Test connection with the key field empty uses the stored key.
    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect(page.getByTestId('test-result')).toContainText('The connection works.');

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await expect(page.getByRole('heading', { name: 'Your model' })).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, 'no sideways scrolling on a phone').toBeLessThanOrEqual(0);
    expect(await serious(page)).toEqual([]);
    await screenshot(page, 'bot-model-connected-phone');

    await page.getByLabel('Base URL').fill('');
    await page.getByRole('button', { name: 'Save model' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Model disconnected' })).toBeVisible();
    await page.reload();
    await expect(page.getByTestId('model-status')).toContainText('Not connected.');
    await expect(page.getByTestId('key-status')).toHaveText('No key stored.');
    await screenshot(page, 'bot-model-none-phone');
  });
});
