import fs from 'node:fs';
import { expect, test } from '@playwright/test';
import { fixtures, screenshot, screenshotsAtBothWidths, signIn } from './fixtures';

const f = fixtures();

test.describe('dashboard', () => {
  test('signed out: every page redirects to sign-in', async ({ page }) => {
    for (const path of ['/', '/conversations', '/responses', '/api-keys', '/widget', '/knowledge', '/bot', `/conversations/${f.alpha.conversations[0]}`]) {
      await page.goto(path);
      await expect(page).toHaveURL(/\/login/);
    }
    await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  });

  test('a wrong password shows an error and stays on the page; an unknown email gets the same answer', async ({ page }) => {
    await page.goto('/login');
    await page.getByLabel('Email').fill(f.alpha.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.locator('p.error[role=alert]')).toHaveText('Wrong email or password.');
    await expect(page).toHaveURL(/\/login/);
    await page.getByLabel('Email').fill('nobody@nowhere.test');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.locator('p.error[role=alert]')).toHaveText('Wrong email or password.');
  });

  test('overview, tables with search, sort and paging, transcript', async ({ page }) => {
    await signIn(page, f.alpha.email, f.alpha.password);
    await expect(page.getByRole('heading', { name: 'Overview' })).toBeVisible();
    await expect(page.locator('.card').first()).toContainText('40');

    await page.getByRole('link', { name: 'Conversations' }).click();
    const rows = page.locator('.gridjs-tbody tr');
    await expect(rows).toHaveCount(15);
    const summary = page.getByTestId('table-summary');
    await expect(summary).toHaveText('Showing 1–15 of 40 conversations');
    // page 2 then a new search: paging restarts at 1
    await page.getByRole('button', { name: 'Page 2', exact: false }).first().click();
    await expect(summary).toContainText('16–30');
    await page.getByLabel('Search').fill('refund');
    await expect(summary).toHaveText('Showing 1–8 of 8 conversations');
    await expect(rows.first()).toContainText('Refund');
    // sort by response count (server-side): a number column's first click is most first, then fewest
    await page.getByLabel('Search').fill('');
    await expect(summary).toContainText('of 40');
    await page.locator('th', { hasText: 'Responses' }).click();
    await expect(rows.first().locator('td').nth(3)).toHaveText('3');
    await page.locator('th', { hasText: 'Responses' }).click();
    await expect(rows.first().locator('td').nth(3)).toHaveText('1');
    await page.locator('th', { hasText: 'Responses' }).click();
    await expect(rows.first().locator('td').nth(3)).toHaveText('3');
    // a transcript
    const firstTitle = rows.first().locator('a');
    const title = (await firstTitle.textContent())!;
    await firstTitle.click();
    await expect(page.getByRole('heading', { name: title })).toBeVisible();
    await expect(page.locator('.msg.user')).toHaveCount(3);
    await expect(page.locator('.msg.assistant').first()).toContainText('Answer 1');

    await page.goto('/responses');
    await expect(page.locator('.gridjs-tbody tr')).toHaveCount(15);
    await page.getByLabel('Channel').selectOption(String(f.alpha.channels[1]));
    await expect(page.locator('.gridjs-tbody tr').first()).toContainText('Help Center');
  });

  test('table state lives in the URL: reload, Back and a shared link show the same rows; a new channel keeps the sort', async ({ page, context }) => {
    await signIn(page, f.alpha.email, f.alpha.password);
    const apiCalls: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/customer-api/v2/response?')) apiCalls.push(decodeURIComponent(r.url()));
    });
    await page.goto('/responses');
    const summary = page.getByTestId('table-summary');
    const rows = page.locator('.gridjs-tbody tr');
    await expect(summary).toContainText('Showing 1–15 of');

    await page.getByLabel('Search').fill('topic');
    await expect(page).toHaveURL(/\/responses\?q=topic$/);
    // The grid re-renders after the search lands; a click during that render can be lost: retry it.
    await expect(async () => {
      if (!/dir=desc$/.test(page.url())) await page.locator('th[data-column-id="likes"]').click();
      await expect(page).toHaveURL(/\?q=topic&sort=likes&dir=desc$/, { timeout: 2_000 });
    }).toPass({ timeout: 15_000 });
    await expect(page.locator('th[data-column-id="likes"]')).toHaveAttribute('aria-sort', 'descending');
    await expect(rows.first().locator('td[data-column-id="likes"]')).toHaveText('3');
    await page.getByRole('button', { name: 'Page 2', exact: true }).click();
    await expect(page).toHaveURL(/\?q=topic&sort=likes&dir=desc&page=2$/);
    await expect(summary).toContainText('Showing 16–30 of');

    // a new channel keeps the search and the sort, and starts at page 1
    const help = String(f.alpha.channels[0]);
    await page.getByLabel('Channel').selectOption(help);
    await expect(page).toHaveURL(new RegExp(`\\?q=topic&channel=${help}&sort=likes&dir=desc$`));
    await expect(summary).toContainText('Showing 1–15 of');
    await expect(rows.first()).toContainText('Website');
    await expect(page.locator('th[data-column-id="likes"]')).toHaveAttribute('aria-sort', 'descending');
    await expect.poll(() => apiCalls.at(-1)).toContain(`query=topic&channel_id=${help}&order_by=likes&sort=DESC&page=1&resultsPerPage=15`);

    await page.getByRole('button', { name: 'Page 2', exact: true }).click();
    await expect(summary).toContainText('Showing 16–');
    const url = page.url();
    expect(url).toMatch(new RegExp(`\\?q=topic&channel=${help}&sort=likes&dir=desc&page=2$`));
    // The rows of that page, once its request has answered (the summary alone can run ahead of the rows).
    await expect.poll(() => apiCalls.at(-1)).toContain(`query=topic&channel_id=${help}&order_by=likes&sort=DESC&page=2&resultsPerPage=15`);
    await page.waitForLoadState('networkidle');
    const pageTwo = await rows.allTextContents();

    // reload: the same state and rows
    await page.reload();
    await expect(summary).toContainText('Showing 16–');
    await expect(page.getByLabel('Search')).toHaveValue('topic');
    await expect(page.getByLabel('Channel')).toHaveValue(help);
    await expect(page.locator('th[data-column-id="likes"]')).toHaveAttribute('aria-sort', 'descending');
    expect(await rows.allTextContents()).toEqual(pageTwo);

    // Back: page 1 of the same filters
    await page.goBack();
    await expect(page).toHaveURL(new RegExp(`\\?q=topic&channel=${help}&sort=likes&dir=desc$`));
    await expect(summary).toContainText('Showing 1–15 of');
    await page.goBack();
    await expect(page).toHaveURL(/\?q=topic&sort=likes&dir=desc&page=2$/);
    await expect(page.getByLabel('Channel')).toHaveValue('');
    await expect(summary).toContainText('Showing 16–30 of');

    // a shared link opens the same rows in another tab
    const other = await context.newPage();
    await other.goto(url);
    await expect(other.getByTestId('table-summary')).toContainText('Showing 16–');
    expect(await other.locator('.gridjs-tbody tr').allTextContents()).toEqual(pageTwo);
    await other.close();

    // page size: in the URL, paging restarts; the sort menu (phones) drives the same state
    await page.getByLabel('Rows per page').selectOption('30');
    await expect(page).toHaveURL(/\?q=topic&size=30&sort=likes&dir=desc$/);
    await expect(rows).toHaveCount(30);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByLabel('Sort by').selectOption('created_at:asc');
    await expect(page).toHaveURL(/\?q=topic&size=30&sort=created_at&dir=asc$/);
    await expect(rows.first().locator('td[data-column-id="created_at"]')).toContainText('2026-10-01');
    // nonsense in the URL falls back to defaults instead of an error
    await page.goto('/responses?size=7&sort=password&dir=up&page=-3&channel=abc');
    await expect(summary).toContainText('Showing 1–15 of');
    await expect(page.locator('p.error')).toHaveCount(0);
  });

  test("another account's records never show and its transcript URL is a 404", async ({ page }) => {
    await signIn(page, f.alpha.email, f.alpha.password);
    const res = await page.goto(`/conversations/${f.beta.conversations[0]}`);
    expect(res?.status()).toBe(404);
    await expect(page.getByRole('heading', { name: 'Not found' })).toBeVisible();
    await page.goto('/conversations');
    await page.getByLabel('Search').fill('Beta');
    await expect(page.getByText('Nothing matches these filters.')).toBeVisible();
    // the API with the session: own account only
    const own = await page.request.get('/customer-api/v2/conversation?resultsPerPage=100');
    expect(own.status()).toBe(200);
    const body = await own.json();
    expect(body.count).toBe(40);
    expect(body.results.every((r: { account_id: number }) => r.account_id === f.alpha.accountId)).toBe(true);
    const other = await page.request.get(`/customer-api/v2/conversation/${f.beta.conversations[0]}`);
    expect(other.status()).toBe(404);
  });

  test('create an API key, use it, revoke it', async ({ page, playwright }) => {
    await signIn(page, f.alpha.email, f.alpha.password);
    await page.goto('/api-keys');
    await page.getByLabel('Name').fill('e2e key');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const key = (await page.getByTestId('new-api-key').textContent())!.trim();
    expect(key).toMatch(/^svc_live_[0-9A-Za-z]{12,}_[0-9A-Za-z]{32,}$/);
    const api = await playwright.request.newContext({ baseURL: page.url() });
    const ok = await api.get('/customer-api/v2/response', { headers: { Authorization: `Bearer ${key}` } });
    expect(ok.status()).toBe(200);
    expect((await ok.json()).count).toBeGreaterThan(40);
    const keyId = key.split('_')[2]!;
    await page.reload();
    await page.getByRole('button', { name: new RegExp(`Revoke e2e key \\(${keyId}\\)`) }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await expect(page.locator('tr', { hasText: keyId }).getByText('revoked')).toBeVisible();
    const revoked = await api.get('/customer-api/v2/response', { headers: { Authorization: `Bearer ${key}` } });
    expect(revoked.status()).toBe(401);
    await api.dispose();
  });

  test('widget client and snippet', async ({ page }) => {
    await signIn(page, f.alpha.email, f.alpha.password);
    await page.goto('/widget');
    await page.getByLabel('Domains (one per line)').fill('shop.example.com\n*.example.org');
    await page.getByRole('button', { name: 'Create client' }).click();
    const clientId = (await page.getByTestId('new-client-id').textContent())!;
    expect(clientId).toMatch(/^wc_/);
    await expect(page.getByTestId('client-secret')).toContainText('wcs_');
    await page.reload();
    await expect(page.locator('tr', { hasText: clientId })).toContainText('*.example.org');
    await page.getByLabel('Client', { exact: true }).selectOption(clientId);
    await page.getByLabel('Load by').selectOption('version');
    await page.getByLabel('Version').selectOption('2.0.1');
    await expect(page.getByTestId('snippet')).toContainText(`svcClientId: "${clientId}"`);
    await expect(page.getByTestId('snippet')).toContainText('data-version="2.0.1"');
    await page.getByLabel('Token mode').selectOption('backend-node');
    await expect(page.getByTestId('snippet')).toContainText('tokenEndpoint: "/api/svc-token"');
    await expect(page.getByTestId('backend-snippet')).toContainText('/api/widget/token');
  });

  test('knowledge base: upload a document and answer from it', async ({ page }) => {
    await signIn(page, f.alpha.email, f.alpha.password);
    await page.goto('/knowledge');
    fs.mkdirSync('tests/artifacts', { recursive: true });
    fs.writeFileSync('tests/artifacts/shipping.md', '# Shipping\n\nParcels to Norway take five working days with the Fjord courier.\n');
    await page.getByLabel('Document', { exact: true }).setInputFiles('tests/artifacts/shipping.md');
    await page.getByRole('button', { name: 'Upload' }).click();
    await expect(page.getByRole('status')).toContainText('Added shipping.md');
    await expect(page.locator('table')).toContainText('shipping.md');
    await page.getByRole('textbox', { name: 'Question' }).fill('How long does shipping to Norway take?');
    await page.getByRole('button', { name: 'Ask' }).click();
    await expect(page.getByTestId('try-answer')).toContainText('five working days');
    await expect(page.getByTestId('try-verdict')).toContainText('Answered from 1 passage');
    await expect(page.getByRole('row', { name: /^1 Shipping .*Parcels to Norway/ })).toBeVisible();
    // The answer's Markdown is rendered (a quote with the heading in bold), never shown raw.
    await expect(page.getByTestId('try-answer').locator('blockquote strong')).toHaveText('Shipping');
    await expect(page.getByTestId('try-answer')).not.toContainText('**');
  });

  test('knowledge base: a document over the size limit is refused in the page, before a byte is sent', async ({ page }) => {
    await signIn(page, f.alpha.email, f.alpha.password);
    await page.goto('/knowledge');
    await expect(page.getByText('Up to 20 MB per document.')).toBeVisible();
    fs.mkdirSync('tests/artifacts', { recursive: true });
    fs.writeFileSync('tests/artifacts/handbook.md', Buffer.alloc(25 * 1024 * 1024, 'a'));
    const posts: string[] = [];
    // The layout's live socket may still poll (a POST to /socket.io/ under load): only the page's own requests count.
    page.on('request', (r) => {
      if (r.method() === 'POST' && !new URL(r.url()).pathname.startsWith('/socket.io/')) posts.push(r.url());
    });
    // Chosen again until the page's script has it: a file set before hydration reaches no handler.
    await expect(async () => {
      await page.getByLabel('Document', { exact: true }).setInputFiles('tests/artifacts/handbook.md');
      await expect(page.getByText('handbook.md (25 MB)')).toBeVisible({ timeout: 2000 });
    }).toPass({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Upload' }).click();
    // (Next keeps a route announcer with role=alert on every page: the form's message is in the panel.)
    const message = page.getByRole('region', { name: 'Add a document' }).getByRole('alert');
    await expect(message).toHaveText('handbook.md is 25 MB: larger than the 20 MB a document may have.');
    await expect(page.getByRole('button', { name: 'Upload' })).toBeEnabled();
    expect(posts).toEqual([]);
    await expect(page.locator('table')).not.toContainText('handbook.md');
    await screenshot(page, 'knowledge-too-large');
    // Choosing another file clears the message.
    fs.writeFileSync('tests/artifacts/returns.md', '# Returns\n\nReturns are free within 30 days.\n');
    await page.getByLabel('Document', { exact: true }).setInputFiles('tests/artifacts/returns.md');
    await expect(message).toHaveCount(0);
    fs.rmSync('tests/artifacts/handbook.md', { force: true });
  });

  test('email: the address, "Acknowledge new emails" saved, and a test email shown arriving', async ({ page }) => {
    await signIn(page, f.alpha.email, f.alpha.password);
    await page.goto('/email');
    await expect(page.getByRole('heading', { name: 'Email', exact: true })).toBeVisible();
    const acknowledge = page.getByLabel('Acknowledge new emails');
    await expect(acknowledge).not.toBeChecked();
    await acknowledge.check();
    await page.getByRole('button', { name: 'Save email settings' }).click();
    await expect(page.getByText('Saved.')).toBeVisible();
    await page.reload();
    await expect(page.getByLabel('Acknowledge new emails')).toBeChecked();
    await page.getByRole('button', { name: 'Send a test email' }).click();
    await expect(page.getByText(/Test email received at \d\d:\d\d:\d\d UTC\./).first()).toBeVisible({ timeout: 20_000 });
    await screenshotsAtBothWidths(page, 'email');
    await page.getByLabel('Acknowledge new emails').uncheck();
    await page.getByRole('button', { name: 'Save email settings' }).click();
    await expect(page.getByText('Saved.')).toBeVisible();
    await page.reload();
    await expect(page.getByLabel('Acknowledge new emails')).not.toBeChecked();
  });

  test('bot settings: the "no answer" text is saved and used when nothing is relevant', async ({ page }) => {
    await signIn(page, f.alpha.email, f.alpha.password);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Bot' }).click();
    await expect(page.getByRole('heading', { name: 'Bot', exact: true })).toBeVisible();
    await page.getByLabel('“No answer” text').fill('Sorry, please write to help@alpha.test.');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect(page.getByRole('status')).toContainText('Settings saved');
    await page.reload();
    await expect(page.getByLabel('“No answer” text')).toHaveValue('Sorry, please write to help@alpha.test.');
    await expect(page.getByLabel('Show sources to visitors')).toBeChecked();
    await page.getByRole('textbox', { name: 'Question' }).fill('How do I sell my car?');
    await page.getByRole('button', { name: 'Ask' }).click();
    await expect(page.getByTestId('try-verdict')).toContainText('Declined');
    await expect(page.getByTestId('try-answer')).toHaveText('Sorry, please write to help@alpha.test.');
    await page.getByRole('textbox', { name: 'Question' }).fill('What are the opening hours of Alpha support?');
    await page.getByRole('button', { name: 'Ask' }).click();
    await expect(page.getByTestId('try-verdict')).toContainText('Answered');
    await expect(page.getByTestId('try-answer')).toContainText('Monday to Friday');
    await page.getByLabel('“No answer” text').fill('');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect(page.getByRole('status')).toContainText('Settings saved');
  });

  test('the sign-in page, then sign out (every dashboard page at both widths: journey.spec.ts)', async ({ page }) => {
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.goto('/login');
    await screenshot(page, 'dashboard-login-desktop');
    await signIn(page, f.alpha.email, f.alpha.password);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page).toHaveURL(/\/login/);
    await page.goto('/');
    await expect(page).toHaveURL(/\/login/);
  });
});

test.describe('transcript attachments', () => {
  test('an attachment a visitor sent is listed in the transcript and downloadable only by its account', async ({ page, playwright, baseURL }) => {
    const { io } = await import('socket.io-client');
    const tokenRes = await fetch(`${baseURL}/api/widget/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: f.widget.client_id, client_secret: f.widget.client_secret }),
    });
    const { access_token: token } = await tokenRes.json();
    const form = new FormData();
    form.append('file', new Blob(['Order 4711 was shipped on Monday.\n'], { type: 'text/plain' }), 'order-note.txt');
    const up = await fetch(`${baseURL}/api/widget/uploads`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    expect(up.status).toBe(201);
    const upload = await up.json();
    const socket = io(`${baseURL}/widget`, { auth: { token }, extraHeaders: { origin: 'http://127.0.0.1:9' }, transports: ['websocket'] });
    const conversationId = await new Promise<string>((resolve, reject) => {
      socket.on('connect_error', reject);
      socket.on('event', (e: { type: string; conversation_id: string }) => {
        if (e.type === 'answer.done') resolve(e.conversation_id);
      });
      socket.on('connect', () =>
        socket.emit('ask', { client_message_id: 'att-1', text: 'When was order 4711 shipped?', attachments: [upload.upload_id] }, () => {}),
      );
    });
    socket.close();

    await signIn(page, f.alpha.email, f.alpha.password);
    await page.goto(`/conversations/${conversationId}`);
    const link = page.getByRole('link', { name: 'order-note.txt' });
    await expect(link).toBeVisible();
    // The transcript links to the Customer API's download, which the session reads.
    await expect(link).toHaveAttribute('href', `/customer-api/v2/attachments/${upload.upload_id}`);
    const [saved] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(saved.suggestedFilename()).toBe('order-note.txt');
    const viaApi = await page.request.get(`/customer-api/v2/attachments/${upload.upload_id}`);
    expect(viaApi.status()).toBe(200);
    expect(viaApi.headers()['content-disposition']).toContain("filename*=UTF-8''order-note.txt");
    expect(await viaApi.text()).toContain('Order 4711');
    const download = await page.request.get(`/attachments/${upload.upload_id}`);
    expect(download.status()).toBe(200);
    expect(await download.text()).toContain('Order 4711');

    const other = await playwright.request.newContext({ baseURL });
    const login = await other.get('/api/auth/csrf');
    const { csrfToken } = await login.json();
    await other.post('/api/auth/callback/credentials', { form: { csrfToken, email: f.beta.email, password: f.beta.password, json: 'true' } });
    expect((await other.get(`/attachments/${upload.upload_id}`)).status()).toBe(404);
    expect((await other.get(`/customer-api/v2/attachments/${upload.upload_id}`)).status()).toBe(404);
    expect((await other.get(`/customer-api/v2/conversation/${conversationId}`)).status()).toBe(404);
    const anonymous = await playwright.request.newContext({ baseURL });
    const anon = await anonymous.get(`/attachments/${upload.upload_id}`, { maxRedirects: 0 });
    expect(anon.status()).toBe(307);
    expect(anon.headers().location).toContain('/login');
    await other.dispose();
    await anonymous.dispose();
  });
});
