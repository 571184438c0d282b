import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { fixtures, screenshot } from './fixtures';
import { apiGet, consoleErrors, hostPage, openAndAsk, startOwnApp, stopApp, waitForStatus, widgetState } from './widget-helpers';

const f = fixtures();
const releases = JSON.parse(fs.readFileSync('lib/widget/releases.json', 'utf8')) as { tracks: Record<string, string>; releases: Array<{ version: string }> };

test.describe('widget loading', () => {
  for (const track of ['stable', 'beta', 'lts']) {
    test(`track ${track} loads its release`, async ({ page }) => {
      const errors = consoleErrors(page);
      await page.goto(hostPage({ sel: 'track', val: track }));
      await expect(page.getByRole('button', { name: 'Open chat' })).toBeVisible();
      await waitForStatus(page, 'connected');
      expect((await widgetState(page))!.version).toBe(releases.tracks[track]);
      expect(errors).toEqual([]);
    });
  }

  test('version pins: 2.0 is the newest 2.0.x, 2.0.0 is exact', async ({ page }) => {
    const newest = releases.releases
      .map((r) => r.version)
      .filter((v) => v.startsWith('2.0.'))
      .sort((a, b) => Number(a.split('.')[2]) - Number(b.split('.')[2]))
      .at(-1);
    await page.goto(hostPage({ sel: 'version', val: '2.0' }));
    await expect.poll(async () => (await widgetState(page))?.version).toBe(newest);
    await page.goto(hostPage({ sel: 'version', val: '2.0.0' }));
    await expect.poll(async () => (await widgetState(page))?.version).toBe('2.0.0');
  });

  const refusals: Array<[string, Record<string, string>, RegExp]> = [
    ['both attributes', { sel: 'both' }, /data-track or data-version.*never both/],
    ['neither attribute', { sel: 'none' }, /needs data-track .* or data-version/],
    ['unknown track', { sel: 'track', val: 'nightly' }, /unknown data-track "nightly"/],
    ['malformed version', { sel: 'version', val: 'latest' }, /data-version "latest"/],
    ['unknown version', { sel: 'version', val: '9.9.9' }, /no release matches data-version "9.9.9"/],
  ];
  for (const [name, params, message] of refusals) {
    test(`refuses ${name} with a console error naming the attribute`, async ({ page }) => {
      const errors = consoleErrors(page);
      await page.goto(hostPage(params));
      await expect.poll(() => errors.join('\n')).toMatch(message);
      await page.waitForTimeout(300);
      expect(await page.locator('svc-chat-widget').count()).toBe(0);
      expect(await widgetState(page)).toBeNull();
    });
  }

  test('a track change and its rollback reach the page (pointers in the database; the embedded one needs the server stopped)', async ({ page, browser }) => {
    test.setTimeout(180_000);
    const port = Number(process.env.E2E_APP_PORT ?? 3210) + 3;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-tracks-'));
    const fx = path.join(dataDir, 'fixtures.json');
    const own = (args: string[]) =>
      JSON.parse(
        execFileSync('node_modules/.bin/tsx', ['lib/cli/main.ts', 'widget', 'track', ...args], {
          env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' },
          encoding: 'utf8',
        }),
      );
    const before = releases.tracks.stable!;
    const other = releases.releases.map((r) => r.version).find((v) => v !== before)!;
    const params = { sel: 'track', val: 'stable', app: `http://localhost:${port}`, fixtures: fx };
    let app = await startOwnApp(port, dataDir, fx);
    try {
      await stopApp(app);
      expect(own(['set', '--track', 'stable', '--version', other])).toMatchObject({ track: 'stable', version: other, previous: before });
      app = await startOwnApp(port, dataDir, fx);
      await page.goto(hostPage(params));
      await expect.poll(async () => (await widgetState(page))?.version).toBe(other);
      await stopApp(app);
      expect(own(['rollback', '--track', 'stable'])).toMatchObject({ version: before, rolled_back_from: other });
      app = await startOwnApp(port, dataDir, fx);
      // Manifests may be cached for a minute: a new visitor (fresh cache) gets the rolled-back version.
      const fresh = await browser.newPage();
      await fresh.goto(hostPage(params));
      await expect.poll(async () => (await widgetState(fresh))?.version).toBe(before);
      await fresh.close();
    } finally {
      await stopApp(app);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('legacy 1.0 works against the same service', async ({ page }) => {
    await page.goto(hostPage({ v2: '0', legacy: '1', mode: 'token' }));
    await expect.poll(async () => (await widgetState(page))?.version).toBe('1.0.9');
    await waitForStatus(page, 'connected');
    await openAndAsk(page, 'What are the opening hours?');
    await expect(page.getByRole('log')).toContainText('Monday to Friday', { timeout: 15_000 });
  });

  test('1.0 and 2.0 on one page: one widget at most and a console error naming the mix', async ({ page }) => {
    const errors = consoleErrors(page);
    await page.goto(hostPage({ legacy: '1', mode: 'token' }));
    await expect.poll(() => errors.join('\n')).toMatch(/1\.0 .*2\.0|2\.0 .*1\.0/);
    await page.waitForTimeout(1000);
    expect(await page.getByRole('button', { name: 'Open chat' }).count()).toBe(1);
  });
});

test.describe('widget tokens', () => {
  test('backend-token mode uses the integrator endpoint', async ({ page }) => {
    await page.goto(hostPage({ mode: 'backend' }));
    await waitForStatus(page, 'connected');
  });

  test('client-id mode gets its own token', async ({ page }) => {
    await page.goto(hostPage({ mode: 'client' }));
    await waitForStatus(page, 'connected');
  });

  test('an invalid token: no widget, status unauthorized, a console error saying why', async ({ page }) => {
    const errors = consoleErrors(page);
    await page.goto(hostPage({ mode: 'token', token: 'eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjEsImNpZCI6IndjX3gifQ.bad' }));
    await waitForStatus(page, 'unauthorized');
    expect(errors.join('\n')).toMatch(/token was refused: token invalid/);
    await expect(page.locator('svc-chat-widget')).toHaveCount(0);
  });

  test('a client-id for a domain that is not registered: refused with the reason', async ({ page }) => {
    const errors = consoleErrors(page);
    await page.goto(hostPage({ mode: 'client', client: f.elsewhere.client_id }));
    await waitForStatus(page, 'unauthorized');
    expect(errors.join('\n')).toMatch(/not a registered domain/);
  });
});

test.describe('chatting', () => {
  test('a full chat streams an answer that then shows in the Customer API; like; reload keeps it', async ({ page }) => {
    await page.goto(hostPage({ mode: 'client', cfg: JSON.stringify({ botName: 'Alpha Bot', defaultQuestions: ['How do returns work?'] }) }));
    await waitForStatus(page, 'connected');
    await page.getByRole('button', { name: 'Open chat' }).click();
    await expect(page.getByRole('dialog', { name: 'Alpha Bot' })).toBeVisible();
    await page.getByRole('button', { name: 'How do returns work?' }).click();
    const log = page.getByRole('log');
    await expect(log).toContainText('30 days for a full refund', { timeout: 15_000 });
    await expect(log).toContainText('Sources: Alpha FAQ');
    await expect(log).not.toContainText('alpha-faq.md');
    const convId = ((await widgetState(page)) as unknown as { conversationId: string }).conversationId;
    const detail = await apiGet(`/customer-api/v2/conversation/${convId}`, f.alpha.key);
    expect(detail.status).toBe(200);
    expect(detail.body.title).toBe('How do returns work?');
    expect(detail.body.messages[1].content).toContain('30 days');
    await page.getByRole('button', { name: 'Like', exact: true }).click();
    await expect(page.getByRole('button', { name: 'Like', exact: true })).toHaveAttribute('aria-pressed', 'true');
    const responseId = detail.body.messages[0].response_id;
    await expect.poll(async () => (await apiGet(`/customer-api/v2/response/${responseId}`, f.alpha.key)).body.likes).toBe(1);
    await page.reload();
    await waitForStatus(page, 'connected');
    await page.getByRole('button', { name: 'Open chat' }).click();
    await expect(page.getByRole('log')).toContainText('How do returns work?');
    await expect(page.getByRole('log')).toContainText('30 days for a full refund');
    await expect(page.getByRole('button', { name: 'Like', exact: true })).toHaveAttribute('aria-pressed', 'true');
  });

  test('two questions sent at once: one conversation, both answered, stored in the order asked', async ({ page }) => {
    await page.goto(hostPage({ mode: 'client' }));
    await waitForStatus(page, 'connected');
    await page.getByRole('button', { name: 'Open chat' }).click();
    const box = page.getByRole('textbox', { name: 'Message' });
    await expect(box).toBeVisible();
    // Both in one task of the page, as a visitor pressing Enter twice faster than the first
    // acknowledgement: the second must not start a conversation of its own.
    await box.evaluate((input: HTMLTextAreaElement) => {
      for (const q of ['How do returns work?', 'And how long does a refund take?']) {
        input.value = q;
        input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
      }
    });
    const log = page.getByRole('log');
    await expect(log).toContainText('And how long does a refund take?');
    await expect
      .poll(
        async () => {
          const state = (await widgetState(page)) as unknown as { conversationId?: string } | null;
          if (!state?.conversationId) return [];
          const detail = await apiGet(`/customer-api/v2/conversation/${state.conversationId}`, f.alpha.key);
          return ((detail.body.messages as Array<{ role: string; content: string }> | undefined) ?? []).map((m) => (m.role === 'user' ? m.content : m.role));
        },
        { timeout: 15_000 },
      )
      .toEqual(['How do returns work?', 'assistant', 'And how long does a refund take?', 'assistant']);
  });

  test('file upload with progress, then asked about', async ({ page }) => {
    await page.goto(hostPage({ mode: 'client', cfg: JSON.stringify({ enableFileUpload: true }) }));
    await waitForStatus(page, 'connected');
    await page.getByRole('button', { name: 'Open chat' }).click();
    const file = path.join(os.tmpdir(), 'warranty.md');
    fs.writeFileSync(file, '# Warranty\n\nThe Trailblazer tent has a seven year warranty on its poles.\n');
    await page.getByLabel('Attach file').setInputFiles(file);
    await expect(page.getByRole('button', { name: 'Remove warranty.md' })).toBeVisible();
    await page.getByRole('textbox', { name: 'Message' }).fill('How long is the Trailblazer tent warranty?');
    await page.keyboard.press('Enter');
    await expect(page.getByRole('log')).toContainText('seven year warranty', { timeout: 15_000 });
    const convId = ((await widgetState(page)) as unknown as { conversationId: string }).conversationId;
    const detail = await apiGet(`/customer-api/v2/conversation/${convId}`, f.alpha.key);
    expect(detail.body.messages[0].attachments[0]).toMatchObject({ filename: 'warranty.md', content_type: 'text/markdown' });
  });

  test('a question nothing answers: the "no answer" text, no quoted passage and no sources line', async ({ page }) => {
    await page.goto(hostPage({ mode: 'client' }));
    await waitForStatus(page, 'connected');
    await page.getByRole('button', { name: 'Open chat' }).click();
    await page.getByRole('textbox', { name: 'Message' }).fill('How do I sell my car?');
    await page.keyboard.press('Enter');
    const answer = page.getByRole('log').locator('.msg.bot').last();
    await expect(answer).toContainText(/couldn.t find|help@alpha\.test/, { timeout: 15_000 });
    await expect(answer.getByRole('button', { name: 'Like', exact: true })).toBeVisible();
    await expect(answer).not.toContainText('Sources');
    await expect(answer.locator('blockquote')).toHaveCount(0);
  });

  test('show() and hide(), also called before the bundle arrives', async ({ page }) => {
    await page.goto(hostPage({ mode: 'client', early: 'hide' }));
    await expect.poll(() => page.evaluate(() => (window as unknown as { __earlyCalled?: boolean }).__earlyCalled)).toBe(true);
    await expect.poll(async () => page.locator('svc-chat-widget').count()).toBe(1);
    await expect(page.getByRole('button', { name: 'Open chat' })).toBeHidden();
    await page.evaluate(() => (window as unknown as { svcAIConfig: { show(): void } }).svcAIConfig.show());
    await expect(page.getByRole('button', { name: 'Open chat' })).toBeVisible();
    await page.evaluate(() => (window as unknown as { svcAIConfig: { hide(): void } }).svcAIConfig.hide());
    await expect(page.getByRole('button', { name: 'Open chat' })).toBeHidden();
  });

  test('theming through the four custom properties', async ({ page }) => {
    await page.goto(hostPage({ mode: 'client', theme: '1' }));
    const launcher = page.getByRole('button', { name: 'Open chat' });
    await expect(launcher).toHaveCSS('background-color', 'rgb(194, 37, 92)');
    await launcher.click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toHaveCSS('background-color', 'rgb(255, 249, 219)');
    await expect(dialog).toHaveCSS('border-radius', '4px');
    await expect(dialog).toHaveCSS('font-family', /Georgia/);
    await screenshot(page, 'widget-themed-desktop');
  });

  test('works under a strict CSP (script-src = the service origin, no unsafe-inline)', async ({ page }) => {
    const errors = consoleErrors(page);
    await page.goto(hostPage({ mode: 'client', csp: 'strict' }));
    await waitForStatus(page, 'connected');
    await openAndAsk(page, 'What are the opening hours?');
    await expect(page.getByRole('log')).toContainText('Monday to Friday', { timeout: 15_000 });
    expect(errors.filter((e) => /Content Security Policy|Refused/.test(e))).toEqual([]);
  });

  test('keyboard only: open, ask, read, close', async ({ page }) => {
    await page.goto(hostPage({ mode: 'client' }));
    await waitForStatus(page, 'connected');
    for (let i = 0; i < 10 && !(await page.getByRole('button', { name: 'Open chat' }).evaluate((b) => b.matches(':focus'))); i++)
      await page.keyboard.press('Tab');
    await expect(page.getByRole('button', { name: 'Open chat' })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(page.getByRole('textbox', { name: 'Message' })).toBeFocused();
    await page.keyboard.type('When is support open?');
    await page.keyboard.press('Enter');
    await expect(page.getByRole('log')).toContainText('Monday to Friday', { timeout: 15_000 });
    await page.keyboard.press('Escape');
    await expect(page.getByRole('dialog')).toBeHidden();
    await expect(page.getByRole('button', { name: 'Open chat' })).toBeFocused();
  });

  test('accessibility: no serious or critical axe violations (closed and open)', async ({ page }) => {
    await page.goto(
      hostPage({
        mode: 'client',
        cfg: JSON.stringify({
          enableFileUpload: true,
          defaultQuestions: ['Opening hours?'],
          advancedWelcomeText: { icon: '👋', title: 'Welcome', description: 'Ask us anything' },
        }),
      }),
    );
    await waitForStatus(page, 'connected');
    const serious = (r: { violations: Array<{ impact?: string | null; id: string }> }) =>
      r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
    expect(serious(await new AxeBuilder({ page }).include('svc-chat-widget').analyze())).toEqual([]);
    await page.getByRole('button', { name: 'Open chat' }).click();
    await page.getByRole('button', { name: 'Opening hours?' }).click();
    await expect(page.getByRole('log')).toContainText('Monday', { timeout: 15_000 });
    expect(serious(await new AxeBuilder({ page }).include('svc-chat-widget').analyze())).toEqual([]);
  });

  test('screenshots: desktop and phone', async ({ browser }) => {
    const cfg = JSON.stringify({
      botName: 'Alpha Bot',
      headerChatName: 'Alpha Support',
      enableFileUpload: true,
      defaultQuestions: ['Opening hours?', 'How do returns work?'],
      advancedWelcomeText: { icon: '👋', title: 'Hi, we are Alpha', description: 'Ask about orders, returns and opening hours.' },
    });
    for (const [w, h, label] of [
      [1280, 800, 'desktop'],
      [390, 844, 'phone'],
    ] as const) {
      const page = await browser.newPage({ viewport: { width: w, height: h } });
      await page.goto(hostPage({ mode: 'client', cfg }));
      await waitForStatus(page, 'connected');
      await screenshot(page, `widget-closed-${label}`);
      await page.getByRole('button', { name: 'Open chat' }).click();
      await screenshot(page, `widget-open-${label}`);
      await page.getByRole('button', { name: 'How do returns work?' }).click();
      await expect(page.getByRole('log')).toContainText('full refund', { timeout: 15_000 });
      await screenshot(page, `widget-answer-${label}`);
      await page.close();
    }
  });
});

test.describe('own server instance', () => {
  test('token expiry and refresh (short lifetime), then a server restart mid-conversation', async ({ page }) => {
    test.setTimeout(120_000);
    const port = 3212;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-own-'));
    const fx = path.join(dataDir, 'fixtures.json');
    let app = await startOwnApp(port, dataDir, fx, { WIDGET_TOKEN_TTL_SECONDS: '6' });
    try {
      const own = fixtures(fx);
      const params = { mode: 'backend', app: `http://localhost:${port}`, fixtures: fx };
      await page.goto(hostPage(params));
      await waitForStatus(page, 'connected');
      await page.getByRole('button', { name: 'Open chat' }).click();
      // past the 6 s lifetime: the widget renewed its token and is still (or again) connected
      await page.waitForTimeout(8000);
      await waitForStatus(page, 'connected');
      await page.getByRole('textbox', { name: 'Message' }).fill('What are the opening hours?');
      await page.keyboard.press('Enter');
      await expect(page.getByRole('log')).toContainText('Monday to Friday', { timeout: 15_000 });
      expect(await (await fetch(`http://127.0.0.1:${process.env.E2E_HOST_PORT ?? 3211}/token-calls`)).text()).not.toBe('1');

      await stopApp(app);
      // SIGTERM drains: the widget first treats it as a move to another instance and shows nothing
      // for 15 s (docs/contracts.md §9); with no other instance it then says it is reconnecting.
      await waitForStatus(page, 'reconnecting', 40_000);
      await expect(page.getByText('Connection lost — reconnecting…')).toBeVisible();
      app = await startOwnApp(port, dataDir, fx, { WIDGET_TOKEN_TTL_SECONDS: '600' });
      await waitForStatus(page, 'connected', 30_000);
      await page.getByRole('textbox', { name: 'Message' }).fill('How do returns work?');
      await page.keyboard.press('Enter');
      await expect(page.getByRole('log')).toContainText('full refund', { timeout: 15_000 });
      // no doubled answers
      await expect(page.locator('svc-chat-widget').locator('.msg.bot')).toHaveCount(2);
      const list = await fetch(`http://localhost:${port}/customer-api/v2/response?resultsPerPage=100&query=opening%20hours`, {
        headers: { authorization: `Bearer ${own.alpha.key}` },
      });
      const body = await list.json();
      expect(body.results.filter((r: { question: string }) => r.question === 'What are the opening hours?')).toHaveLength(1);
    } finally {
      await stopApp(app);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
