/**
 * Section "Synonyms" on /knowledge in Chromium (docs/contracts.md §15): "How much is postage?" is
 * declined, answered after "postage, shipping" is added, declined again after "Remove"; a refused
 * group stays in the box with the reason; screenshots and axe at 1366 and 390 px.
 */
import fs from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { fixtures, screenshotsAtBothWidths, signIn } from './fixtures';

const f = fixtures();

test('a synonym group turns a declined question into an answered one, until removed', async ({ page: p }) => {
  await signIn(p, f.beta.email, f.beta.password);
  await p.goto('/knowledge');
  fs.mkdirSync('tests/artifacts', { recursive: true });
  fs.writeFileSync('tests/artifacts/harbor-faq.md', '# Harbor Shop FAQ\n\n## Shipping\n\nShipping costs 4 euros within the EU and takes three working days.\n');
  await p.getByLabel('Document', { exact: true }).setInputFiles('tests/artifacts/harbor-faq.md');
  await p.getByRole('button', { name: 'Upload' }).click();
  await expect(p.getByRole('region', { name: 'Add a document' }).getByRole('status')).toContainText('Added harbor-faq.md');

  const ask = async () => {
    await p.getByRole('textbox', { name: 'Question' }).fill('How much is postage?');
    await p.getByRole('button', { name: 'Ask' }).click();
  };
  await ask();
  await expect(p.getByTestId('try-answer')).not.toContainText('4 euros');

  const section = p.getByRole('region', { name: 'Synonyms' });
  await expect(section.getByText('No synonyms yet.')).toBeVisible();
  const words = section.getByRole('textbox', { name: 'Words' });
  await words.fill('postage');
  await section.getByRole('button', { name: 'Add synonyms' }).click();
  await expect(section.getByRole('alert')).toContainText('Words: give at least two different words');
  await expect(words).toHaveValue('postage');

  await words.fill('postage, shipping');
  await section.getByRole('button', { name: 'Add synonyms' }).click();
  await expect(section.getByRole('status')).toContainText('Added: postage, shipping.');
  await expect(words).toHaveValue('');
  await expect(section.getByRole('listitem').filter({ hasText: 'postage, shipping' })).toBeVisible();
  await ask();
  await expect(p.getByTestId('try-answer')).toContainText('4 euros');

  await screenshotsAtBothWidths(p, 'knowledge-synonyms', async (width) => {
    const r = await new AxeBuilder({ page: p }).include('main section').exclude('[aria-live="polite"] > .table-scroll').analyze();
    expect(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes[0]?.target}`)).toEqual([]);
    for (const b of await section.getByRole('button').all()) {
      const box = await b.boundingBox();
      if (box) expect(box.x + box.width, `${await b.textContent()} at ${width} px`).toBeLessThanOrEqual(width);
    }
  });

  await section.getByRole('button', { name: 'Remove postage, shipping' }).click();
  await expect(section.getByText('No synonyms yet.')).toBeVisible();
  await ask();
  await expect(p.getByTestId('try-answer')).not.toContainText('4 euros');
});
