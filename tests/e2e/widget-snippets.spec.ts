import { expect, test, type Page } from '@playwright/test';
import { fixtures, screenshot, signIn } from './fixtures';
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
  await page.getByLabel('Name', { exact: true }).fill('Snippet test site');
  await page.getByLabel('Domains (one per line)').fill('127.0.0.1');
  await page.getByRole('button', { name: 'Create client' }).click();
  clientId = (await page.getByTestId('new-client-id').textContent())!;
  secret = (await page.getByTestId('client-secret').textContent())!;
  expect(clientId).toMatch(/^wc_/);
  expect(secret).toMatch(/^wcs_/);
  await expect(page.getByLabel('Client', { exact: true })).toHaveValue(clientId);
  await expect(page.getByTestId('snippet')).toContainText(`svcClientId: "${clientId}"`);
  const tracks = await page
    .getByLabel('Track')
    .locator('option')
    .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  await page.getByLabel('Load by').selectOption('version');
  const versions = await page
    .getByLabel('Version')
    .locator('option')
    .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
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
    // The Appearance section has fields of the same names: these are the snippet's.
    const snippet = page.getByRole('region', { name: 'Embed snippet' });
    await snippet.getByText('Options: name, welcome text, questions, colours').click();
    await snippet.getByLabel('Bot name').fill('Acme helper');
    await snippet.getByLabel('Welcome title').fill('Hello from Acme');
    await snippet.getByLabel('Welcome text').fill('Ask about orders, returns and opening hours.');
    await snippet.getByLabel('Suggested questions (one per line)').fill('What are the opening hours?\nHow do returns work?');
    await snippet.getByLabel('Own colours').check();
    await snippet.getByLabel('Primary colour').fill('#c2255c');
    for (const sel of selectors) {
      await page.getByLabel('Load by').selectOption(sel.kind);
      await page.getByLabel(sel.kind === 'track' ? 'Track' : 'Version').selectOption(sel.value);
      const html = (await page.getByTestId('snippet').textContent())!;
      expect(html).toContain(`data-${sel.kind}="${sel.value}"`);
      const backend = mode === 'client-id' ? undefined : (await page.getByTestId('backend-snippet').textContent())!;
      if (backend) expect(backend).toContain(clientId);
      const pasted = await fetch(`${HOST}/paste`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ html, backend, secret }),
      });
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

test('clients: a name, a pasted address reduced to its host, a non-domain refused, rename, inline rotate, inline delete', async ({ page }) => {
  await openGenerator(page);
  await page.getByLabel('Name', { exact: true }).fill('Help centre');
  await page.getByLabel('Domains (one per line)').fill('not a domain!!');
  await page.getByRole('button', { name: 'Create client' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'domain' })).toContainText('"not a domain!!" contains a space: give one domain per line');
  await expect(page.getByLabel('Name', { exact: true }), 'a refused entry stays to be fixed').toHaveValue('Help centre');
  await expect(page.getByLabel('Domains (one per line)')).toHaveValue('not a domain!!');
  await page.getByLabel('Domains (one per line)').fill('https://help.example.com/path?x=1\nshop.example.com:8443');
  await page.getByRole('button', { name: 'Create client' }).click();
  const id = (await page.getByTestId('new-client-id').textContent())!;
  const row = page.locator('tr', { hasText: id });
  await expect(row).toContainText('Help centre');
  await expect(row.locator('.badge')).toHaveText(['help.example.com', 'shop.example.com']);
  await expect(page.getByLabel('Client', { exact: true })).toHaveValue(id);
  await expect(page.getByLabel('Client', { exact: true }).locator('option:checked')).toHaveText(`Help centre (${id})`);

  await row.getByRole('button', { name: `Rename Help centre (${id})` }).click();
  await row.getByLabel(`Name of ${id}`).fill('Help centre (EU)');
  await row.getByRole('button', { name: 'Save name' }).click();
  await expect(row.getByText('Help centre (EU)', { exact: true })).toBeVisible();

  let dialogs = 0;
  page.on('dialog', (d) => {
    dialogs++;
    void d.dismiss();
  });
  await row.getByRole('button', { name: `Rotate secret of ${id}` }).click();
  await row.getByRole('button', { name: 'Cancel' }).click();
  await expect(row.getByTestId('client-secret')).toHaveCount(0);
  await row.getByRole('button', { name: `Rotate secret of ${id}` }).click();
  await expect(row.getByRole('group', { name: `Confirm rotating the secret of ${id}` })).toContainText('The old secret stops working at once.');
  await row.getByRole('button', { name: 'Yes, rotate' }).click();
  await expect(row.getByTestId('client-secret')).toContainText('wcs_');
  await row.getByRole('button', { name: `Delete ${id}` }).click();
  await expect(row.getByRole('group', { name: `Confirm deleting ${id}` })).toContainText('Widgets using it disconnect at once');
  await row.getByRole('button', { name: 'Yes, delete' }).click();
  await expect(page.locator('tr', { hasText: id })).toHaveCount(0);
  expect(dialogs, 'no window.confirm').toBe(0);
});

test('a refused widget shows on /widget with origin, reason and count', async ({ page, browser }) => {
  // A token this service issued (so the refusal may count against its client), used on a site not registered for it.
  const issued = await fetch(`${APP}/api/widget/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: f.elsewhere.client_id, client_secret: f.elsewhere.client_secret }),
  });
  expect(issued.status).toBe(200);
  const { access_token: token } = (await issued.json()) as { access_token: string };
  const site = await browser.newPage();
  const errors = consoleErrors(site);
  await site.goto(`${HOST}/page?mode=token&token=${encodeURIComponent(token)}`);
  await waitForStatus(site, 'unauthorized');
  expect(errors.join('\n')).toMatch(/domain not allowed/);
  await site.close();
  await openGenerator(page);
  const refusals = page.getByTestId('refusals');
  const row = refusals.locator('tr', { hasText: HOST });
  await expect(row).toContainText('connection');
  await expect(row).toContainText('domain not allowed');
  await expect(row).toContainText('Add this host to the client’s domains');
  await expect(row).toContainText('shop.example.com');
});

test('/api-keys offers only the keys this deployment accepts', async ({ page }) => {
  await signIn(page, f.alpha.email, f.alpha.password);
  await page.goto('/api-keys');
  await expect(page.getByTestId('key-env-note')).toContainText('New keys are live keys: this service accepts live keys only.');
  await expect(page.getByLabel('Environment')).toHaveCount(0);
});

for (const [label, viewport] of [
  ['desktop', { width: 1366, height: 900 }],
  ['phone', { width: 390, height: 844 }],
] as const) {
  test(`screenshots of /widget and /api-keys at ${label} width`, async ({ page }) => {
    await page.setViewportSize(viewport);
    await signIn(page, f.alpha.email, f.alpha.password);
    for (const p of ['/widget', '/api-keys']) {
      await page.goto(p);
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, `${p} fits the ${label} width`).toBeLessThanOrEqual(0);
      await screenshot(page, `dashwidget${p.replace('/', '-')}-${label}`);
      // Viewport-high slices too, to look at the page at its real size.
      const height = await page.evaluate(() => document.documentElement.scrollHeight);
      for (let y = 0, i = 1; y < height; y += viewport.height, i++) {
        await page.screenshot({
          path: `tests/artifacts/screenshots/slices/dashwidget${p.replace('/', '-')}-${label}-${i}.png`,
          fullPage: true,
          clip: { x: 0, y, width: viewport.width, height: Math.min(viewport.height, height - y) },
        });
      }
    }
  });
}
