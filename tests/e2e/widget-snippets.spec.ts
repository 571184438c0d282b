import { expect, test, type Page } from '@playwright/test';
import { fixtures, signIn } from './fixtures';
import { APP, consoleErrors, HOST, waitForStatus, widgetState } from './widget-helpers';

/**
 * Every snippet the dashboard's /widget page generates works when pasted as is: the page snippet
 * goes into a page of another origin (the host server), and in backend-token mode the generated
 * backend code is saved as a file, imported and mounted by that server unchanged. Each token
 * mode × each track and each version the generator offers: the widget appears, connects with the
 * chosen release, shows the chosen options and answers a question.
 */
const f = fixtures();
let clientId = '';
let secret = '';
let selectors: Array<{ kind: 'track' | 'version'; value: string }> = [];

test.describe.configure({ mode: 'serial' });

async function openGenerator(page: Page) {
  await signIn(page, f.alpha.email, f.alpha.password);
  await page.goto('/widget');
}

async function expectedVersion(kind: 'track' | 'version', value: string): Promise<string> {
  const r = await fetch(`${APP}/chatbot/manifests/${kind === 'track' ? 'tracks' : 'versions'}/${value}/manifest.json`);
  expect(r.status).toBe(200);
  return ((await r.json()) as { version: string }).version;
}

test('a client created in the dashboard is selected by the generator', async ({ page }) => {
  await openGenerator(page);
  await page.getByLabel('Domains (one per line)').fill('127.0.0.1');
  await page.getByRole('button', { name: 'Create client' }).click();
  clientId = (await page.getByTestId('new-client-id').textContent())!;
  secret = (await page.getByTestId('client-secret').textContent())!;
  expect(clientId).toMatch(/^wc_/);
  expect(secret).toMatch(/^wcs_/);
  await expect(page.getByLabel('Client', { exact: true })).toHaveValue(clientId);
  await expect(page.getByTestId('snippet')).toContainText(`svcClientId: "${clientId}"`);
  const tracks = await page.getByLabel('Track').locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  await page.getByLabel('Load by').selectOption('version');
  const versions = await page.getByLabel('Version').locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  expect(tracks).toEqual(['stable', 'beta', 'lts']);
  expect(versions).toContain('2.0');
  selectors = [...tracks.map((value) => ({ kind: 'track' as const, value })), ...versions.map((value) => ({ kind: 'version' as const, value }))];
});

for (const mode of ['client-id', 'backend-node', 'backend-fetch'] as const) {
  test(`${mode}: every track and version, pasted as is on another origin, connects and answers`, async ({ page, browser }) => {
    test.setTimeout(240_000);
    expect(clientId, 'the first test created the client').not.toBe('');
    await openGenerator(page);
    await page.getByLabel('Client', { exact: true }).selectOption(clientId);
    await page.getByLabel('Token mode').selectOption(mode);
    await page.getByText('Options: name, welcome text, questions, colours').click();
    await page.getByLabel('Bot name').fill('Acme helper');
    await page.getByLabel('Welcome title').fill('Hello from Acme');
    await page.getByLabel('Welcome text').fill('Ask about orders, returns and opening hours.');
    await page.getByLabel('Suggested questions (one per line)').fill('What are the opening hours?\nHow do returns work?');
    await page.getByLabel('Own colours').check();
    await page.getByLabel('Primary colour').fill('#c2255c');
    for (const sel of selectors) {
      await page.getByLabel('Load by').selectOption(sel.kind);
      await page.getByLabel(sel.kind === 'track' ? 'Track' : 'Version').selectOption(sel.value);
      const html = (await page.getByTestId('snippet').textContent())!;
      expect(html).toContain(`data-${sel.kind}="${sel.value}"`);
      const backend = mode === 'client-id' ? undefined : (await page.getByTestId('backend-snippet').textContent())!;
      if (backend) expect(backend).toContain(clientId);
      const pasted = await fetch(`${HOST}/paste`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ html, backend, secret }) });
      expect(pasted.status).toBe(200);
      const { page: path } = (await pasted.json()) as { page: string };
      const calls = Number(await (await fetch(`${HOST}/pasted-token-calls`)).text());

      const site = await browser.newPage();
      const errors = consoleErrors(site);
      await site.goto(`${HOST}${path}`);
      await waitForStatus(site, 'connected');
      expect((await widgetState(site))!.version, `${mode} ${sel.kind} ${sel.value}`).toBe(await expectedVersion(sel.kind, sel.value));
      const launcher = site.getByRole('button', { name: 'Open chat' });
      await expect(launcher).toHaveCSS('background-color', 'rgb(194, 37, 92)');
      await launcher.click();
      await expect(site.getByRole('dialog', { name: 'Acme helper' })).toBeVisible();
      await expect(site.getByRole('dialog')).toContainText('Hello from Acme');
      await site.getByRole('button', { name: 'What are the opening hours?' }).click();
      await expect(site.getByRole('log')).toContainText('Monday to Friday', { timeout: 20_000 });
      const after = Number(await (await fetch(`${HOST}/pasted-token-calls`)).text());
      expect(after - calls, 'the pasted backend served the token').toBe(mode === 'client-id' ? 0 : 1);
      expect(errors).toEqual([]);
      await site.close();
    }
  });
}
