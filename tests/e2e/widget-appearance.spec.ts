import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { fixtures, screenshot, signIn } from './fixtures';
import { apiGet, consoleErrors, hostPage, waitForStatus, widgetState } from './widget-helpers';

/**
 * Issue #28 items 2, 6, 7 and the client card at 390 px (docs/contracts.md §16): the Appearance
 * section on /widget with its live preview, the widget on a page of another origin applying the
 * saved appearance (the page's own options win), "Add a comment" after Like/Dislike shown in the
 * API and the transcript, and a reload that opens at the newest message with attachments kept.
 */
const f = fixtures();
const VERSION = '2.1.1';
const WIDTHS = [
  ['desktop', 1366, 900],
  ['phone', 390, 844],
] as const;
let clientId = '';

test.describe.configure({ mode: 'serial' });

/** Serious and critical axe violations, each with the elements it names. */
const serious = (r: { violations: Array<{ impact?: string | null; id: string; nodes: Array<{ target: unknown }> }> }) =>
  r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${JSON.stringify(v.nodes.map((n) => n.target))}`);

const page2 = (client: string, cfg: object = {}, extra: Record<string, string> = {}) =>
  hostPage({ sel: 'version', val: VERSION, mode: 'client', client, cfg: JSON.stringify(cfg), ...extra });

/** A page in its own context (axe needs one made by browser.newContext()). */
async function freshPage(browser: Browser, viewport?: { width: number; height: number }): Promise<Page> {
  return (await browser.newContext(viewport ? { viewport } : {})).newPage();
}

async function openWidget(page: Page) {
  await page.getByRole('button', { name: 'Open chat' }).click();
}

test('the Appearance section previews while typing, refuses bad values and saves', async ({ page }) => {
  await signIn(page, f.alpha.email, f.alpha.password);
  await page.goto('/widget');
  await page.getByLabel('Name', { exact: true }).fill('Bakery shop');
  await page.getByLabel('Domains (one per line)').fill('127.0.0.1');
  await page.getByRole('button', { name: 'Create client' }).click();
  clientId = (await page.getByTestId('new-client-id').textContent())!;
  const section = page.getByRole('region', { name: 'Appearance' });
  await expect(section.getByLabel('Appearance of client')).toHaveValue(clientId);
  const preview = section.getByRole('region', { name: 'Preview' });
  await expect(preview).toContainText('Hi! Ask us anything.');

  await section.getByLabel('Bot name').fill('Bluebird');
  await expect(preview).toContainText('Bluebird', { timeout: 2000 });
  await section.getByLabel('Header name').fill('Bluebird Bakery');
  await section.getByLabel('Welcome title').fill('Fresh bread, quick answers');
  await section.getByLabel('Welcome text').fill('Ask about cakes, orders and opening hours.');
  await section.getByLabel('Default questions').fill('What are the opening hours?\nHow do returns work?');
  await section.getByLabel('Primary colour').fill('#1d4ed8');
  await section.getByLabel('Background colour').fill('#fffaf0');
  await section.getByLabel('Font').fill('Georgia, serif');
  await section.getByLabel('Corner radius').fill('6');
  await expect(preview.getByText('Talk to a person')).toBeVisible();
  await section.getByLabel('Handoff button text').fill('Chat with our bakers');
  await expect(preview.getByText('Chat with our bakers')).toBeVisible({ timeout: 2000 });
  await expect(preview.getByText('Talk to a person')).toHaveCount(0);
  await expect(preview).toContainText('Bluebird Bakery');
  await expect(preview).toContainText('Fresh bread, quick answers');
  await expect(preview).toContainText('What are the opening hours?');
  await expect(preview.getByText('Bluebird Bakery')).toBeVisible();
  const header = preview.locator('div', { hasText: /^Bluebird Bakery$/ }).first();
  await expect(header).toHaveCSS('background-color', 'rgb(29, 78, 216)');

  // Markup in the button's words is refused (plain text only) and what was typed stays.
  await section.getByLabel('Handoff button text').fill('<img src=x onerror=alert(1)>');
  await section.getByRole('button', { name: 'Save appearance' }).click();
  await expect(section.getByRole('alert')).toContainText('Handoff button text: must be one line of plain text, without < or >');
  await expect(section.getByLabel('Handoff button text')).toHaveValue('<img src=x onerror=alert(1)>');
  await expect(preview.locator('img[src="x"]')).toHaveCount(0);
  await section.getByLabel('Handoff button text').fill('Chat with our bakers');

  // A colour that carries more CSS is refused and what was typed stays.
  await section.getByLabel('Primary colour').fill('red;} body{display:none');
  await section.getByRole('button', { name: 'Save appearance' }).click();
  await expect(section.getByRole('alert')).toContainText('Primary colour: must be a CSS colour');
  await expect(section.getByLabel('Primary colour')).toHaveValue('red;} body{display:none');
  await section.getByLabel('Primary colour').fill('#1d4ed8');
  await section.getByRole('button', { name: 'Save appearance' }).click();
  await expect(section.getByRole('status')).toContainText('Saved.');
  const served = await (await fetch(`${new URL(page.url()).origin}/api/widget/config?client_id=${clientId}`)).json();
  expect(served.appearance).toMatchObject({
    bot_name: 'Bluebird',
    header_name: 'Bluebird Bakery',
    primary_color: '#1d4ed8',
    corner_radius: 6,
    handoff_button_text: 'Chat with our bakers',
  });
  // The section is checked (the page's header and the create form's .success boxes are issue #28 item 10).
  const axeSection = () => new AxeBuilder({ page }).include('section[aria-labelledby="appearance-heading"]').analyze();
  expect(serious(await axeSection())).toEqual([]);

  for (const [label, width, height] of WIDTHS) {
    await page.setViewportSize({ width, height });
    await section.scrollIntoViewIfNeeded();
    await screenshot(page, `widget-appearance-dashboard-${label}`);
    await section.screenshot({ path: `tests/artifacts/screenshots/widget-appearance-section-${label}.png` });
    expect(serious(await axeSection()), `axe at ${width}`).toEqual([]);
  }
});

test('at 390 px every client card shows "Delete" whole', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, f.alpha.email, f.alpha.password);
  await page.goto('/widget');
  const del = page.getByRole('button', { name: `Delete ${clientId}` });
  await del.scrollIntoViewIfNeeded();
  await expect(del).toHaveText('Delete');
  const fits = await del.evaluate((b) => {
    const r = b.getBoundingClientRect();
    let clipped = false;
    for (let p = b.parentElement; p; p = p.parentElement) {
      const pr = p.getBoundingClientRect();
      if (getComputedStyle(p).overflowX !== 'visible' && (r.right > pr.right + 0.5 || r.left < pr.left - 0.5)) clipped = true;
    }
    return { right: r.right, inner: b.scrollWidth <= b.clientWidth, clipped };
  });
  expect(fits.right).toBeLessThanOrEqual(390);
  expect(fits.inner).toBe(true);
  expect(fits.clipped).toBe(false);
  await del.screenshot({ path: 'tests/artifacts/screenshots/widget-client-card-delete-phone.png' });
  await page.getByRole('row').filter({ has: del }).screenshot({ path: 'tests/artifacts/screenshots/widget-client-card-phone.png' });
});

test('the widget on another origin applies the saved appearance; the page options still win', async ({ browser }) => {
  expect(clientId).not.toBe('');
  for (const [label, width, height] of WIDTHS) {
    const page = await freshPage(browser, { width, height });
    const errors = consoleErrors(page);
    await page.goto(page2(clientId));
    await waitForStatus(page, 'connected');
    expect((await widgetState(page))!.version).toBe(VERSION);
    const launcher = page.getByRole('button', { name: 'Open chat' });
    await expect(launcher).toHaveCSS('background-color', 'rgb(29, 78, 216)');
    await openWidget(page);
    const dialog = page.getByRole('dialog', { name: 'Bluebird Bakery' });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText('Fresh bread, quick answers');
    await expect(dialog).toContainText('Ask about cakes, orders and opening hours.');
    await expect(page.getByRole('button', { name: 'What are the opening hours?' })).toBeVisible();
    await expect(dialog).toHaveCSS('font-family', 'Georgia, serif');
    await expect(dialog).toHaveCSS('background-color', 'rgb(255, 250, 240)');
    if (width > 480) await expect(dialog).toHaveCSS('border-radius', '6px');
    // The handoff buttons show the saved words; their accessible name still says "talk to a person".
    await page.getByRole('button', { name: 'Menu' }).click();
    const inMenu = page.getByRole('button', { name: 'Chat with our bakers (talk to a person)', exact: true });
    await expect(inMenu).toBeVisible();
    await expect(inMenu).toHaveText('Chat with our bakers');
    await screenshot(page, `widget-appearance-handoff-menu-${label}`);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('textbox', { name: 'Message' }).fill('What is the capital of Australia?');
    await page.getByRole('button', { name: 'Send' }).click();
    const offer = page.getByRole('log').getByRole('button', { name: 'Chat with our bakers (talk to a person)', exact: true });
    await expect(offer).toBeVisible({ timeout: 15_000 });
    await expect(offer).toHaveText('Chat with our bakers');
    await screenshot(page, `widget-appearance-${label}`);
    expect(serious(await new AxeBuilder({ page }).include('svc-chat-widget').analyze())).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  }

  // window.svcAIConfig and the page's --svc-custom-* properties win over the dashboard.
  const page = await freshPage(browser);
  await page.goto(
    page2(clientId, { headerChatName: 'Page header', defaultQuestions: ['From the page?'], handoffButtonText: '<b>Human</b> please' }, { theme: '1' }),
  );
  await waitForStatus(page, 'connected');
  await expect(page.getByRole('button', { name: 'Open chat' })).toHaveCSS('background-color', 'rgb(194, 37, 92)');
  await openWidget(page);
  await expect(page.getByRole('dialog', { name: 'Page header' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'From the page?' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'What are the opening hours?' })).toHaveCount(0);
  await expect(page.getByRole('dialog')).toContainText('Fresh bread, quick answers');
  // The page's words win too, and are text, never markup.
  await page.getByRole('button', { name: 'Menu' }).click();
  const pageWords = page.getByRole('button', { name: '<b>Human</b> please (talk to a person)', exact: true });
  await expect(pageWords).toHaveText('<b>Human</b> please');
  expect(await pageWords.evaluate((b) => b.children.length)).toBe(0);
  await page.context().close();
});

test('"Add a comment" after Like: the comment reaches the API and the transcript', async ({ browser }) => {
  for (const [label, width, height] of WIDTHS) {
    const page = await freshPage(browser, { width, height });
    await page.goto(page2(f.widget.client_id));
    await waitForStatus(page, 'connected');
    await openWidget(page);
    await page.getByRole('textbox', { name: 'Message' }).fill('How do returns work?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.getByRole('log')).toContainText('30 days for a full refund', { timeout: 15_000 });
    await expect(page.getByRole('button', { name: 'Add a comment' })).toHaveCount(0);
    await page.getByRole('button', { name: 'Dislike', exact: true }).click();
    await page.getByRole('button', { name: 'Add a comment' }).click();
    const text = `I wanted the address for returns (${label}).`;
    await page.getByRole('textbox', { name: 'Comment' }).fill(text);
    await screenshot(page, `widget-comment-form-${label}`);
    expect(serious(await new AxeBuilder({ page }).include('svc-chat-widget').analyze())).toEqual([]);
    await page.getByRole('button', { name: 'Send comment' }).click();
    await expect(page.getByRole('log')).toContainText('Thank you for your comment.');
    await screenshot(page, `widget-comment-sent-${label}`);

    const convId = ((await widgetState(page)) as unknown as { conversationId: string }).conversationId;
    const conv = await apiGet(`/customer-api/v2/conversation/${convId}`, f.alpha.key);
    const responseId = conv.body.messages[0].response_id;
    const one = await apiGet(`/customer-api/v2/response/${responseId}`, f.alpha.key);
    expect(one.body.comments).toBe(1);
    expect(one.body.comment_list.map((c: { text: string }) => c.text)).toEqual([text]);

    const dash = await freshPage(browser, { width, height });
    await signIn(dash, f.alpha.email, f.alpha.password);
    await dash.goto(`/conversations/${convId}`);
    await expect(dash.getByRole('list', { name: 'Comments' })).toContainText(text);
    await screenshot(dash, `transcript-comment-${label}`);
    await dash.context().close();
    await page.context().close();
  }
});

test('the default snippet (track stable) loads 2.1: "Talk to a person" and "Add a comment"; /widget says what each track has', async ({ browser }) => {
  const releases = JSON.parse(fs.readFileSync('lib/widget/releases.json', 'utf8')) as { tracks: Record<string, string> };
  const page = await freshPage(browser);
  const errors = consoleErrors(page);
  await page.goto(hostPage({ sel: 'track', val: 'stable', mode: 'client', client: f.widget.client_id }));
  await waitForStatus(page, 'connected');
  expect((await widgetState(page))!.version).toMatch(/^2\.1\./);
  await openWidget(page);
  await page.getByRole('textbox', { name: 'Message' }).fill('How do returns work?');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByRole('log')).toContainText('30 days for a full refund', { timeout: 15_000 });
  await page.getByRole('button', { name: 'Dislike', exact: true }).click();
  await expect(page.getByRole('button', { name: 'Add a comment' })).toBeVisible();
  await expect(page.getByRole('log').getByRole('button', { name: /talk to a person/i })).toBeVisible();
  await page.getByRole('button', { name: 'Menu' }).click();
  await expect(page.getByRole('button', { name: /talk to a person/i }).last()).toBeVisible();
  expect(errors).toEqual([]);
  await page.context().close();

  const dash = await freshPage(browser, { width: 1366, height: 900 });
  await signIn(dash, f.alpha.email, f.alpha.password);
  await dash.goto('/widget');
  const snippet = dash.getByRole('region', { name: 'Embed snippet' });
  await expect(snippet.getByLabel('Track')).toHaveValue('stable');
  await expect(snippet.getByTestId('snippet-features')).toHaveText(`Widget ${releases.tracks.stable}: everything the preview below shows.`);
  await snippet.getByLabel('Track').selectOption('lts');
  await expect(snippet.getByTestId('snippet-features')).toContainText(`Widget ${releases.tracks.lts} lacks what the preview below shows: "Talk to a person"`);
  await snippet.getByText("What each track's widget has").click();
  const table = snippet.getByRole('table', { name: 'Features of each release' });
  await expect(table.getByRole('row', { name: /Comments after Like/ })).toHaveText(/yes.*yes.*no/);
  await expect(dash.getByTestId('appearance-versions')).toContainText(`the lts track (${releases.tracks.lts})`);
  await expect(dash.getByTestId('appearance-versions')).not.toContainText('stable');
  await screenshot(dash, 'widget-track-features-1366');
  await dash.context().close();
});

test('after a reload the widget opens at the newest message, with its attachments', async ({ browser }) => {
  test.setTimeout(120_000);
  for (const [label, width, height] of WIDTHS) {
    const page = await freshPage(browser, { width, height });
    await page.goto(page2(f.widget.client_id, { enableFileUpload: true }));
    await waitForStatus(page, 'connected');
    await openWidget(page);
    const file = path.join(os.tmpdir(), `receipt-${label}.txt`);
    fs.writeFileSync(file, 'Receipt 4411: one Trailblazer tent.\n');
    await page.getByLabel('Attach file').setInputFiles(file);
    await expect(page.getByRole('button', { name: `Remove receipt-${label}.txt` })).toBeVisible();
    const box = page.getByRole('textbox', { name: 'Message' });
    const questions = ['Can I return the tent on my receipt?', 'How do returns work?', 'What are the opening hours?', 'And how long does a refund take?'];
    for (const [i, q] of questions.entries()) {
      await box.fill(q);
      await page.keyboard.press('Enter');
      await expect(page.getByRole('log').locator('.msg.bot:not(.error)')).toHaveCount(i + 1, { timeout: 15_000 });
      await expect(page.getByRole('button', { name: 'Like', exact: true })).toHaveCount(i + 1, { timeout: 15_000 });
    }
    await page.reload();
    await waitForStatus(page, 'connected');
    await expect.poll(() => page.locator('svc-chat-widget').evaluate((w) => w.shadowRoot!.querySelectorAll('.msg.bot').length)).toBe(questions.length);
    await openWidget(page);
    const log = page.getByRole('log');
    await expect(log).toContainText(`Attached: receipt-${label}.txt`);
    // The answer from the visitor's own file cites it as theirs; the next question its own (knowledge-base) answer.
    await expect(log).toContainText(`From your file receipt-${label}.txt:`);
    await expect(log).toContainText(`Sources: your file receipt-${label}.txt`);
    await expect(log.locator('.msg.bot').nth(1)).toContainText('30 days for a full refund');
    await expect
      .poll(() => log.evaluate((l) => Math.abs(l.scrollHeight - l.clientHeight - l.scrollTop)), { message: 'scrolled to the newest message' })
      .toBeLessThanOrEqual(2);
    expect(await log.evaluate((l) => l.scrollHeight > l.clientHeight)).toBe(true);
    await screenshot(page, `widget-reloaded-${label}`);
    await page.context().close();
  }
});
