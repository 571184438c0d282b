/**
 * Team and identity in Chromium (docs/contracts.md §13), with the real SMTP server process serve-app.ts
 * starts: invite → mail → accept → an agent's view; password reset; two-factor sign-in with a
 * computed code, a recovery code and a replayed code; the owner requiring two-factor.
 */
import fs from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { generate } from 'otplib';
import { fixtures, screenshotsAtBothWidths, signIn } from './fixtures';

const f = fixtures();
test.describe.configure({ mode: 'serial' });

type Mail = { envelopeTo: string[]; subject: string; text: string; html: string | null };
async function mailTo(address: string, match: RegExp, after = 0): Promise<Mail> {
  let found: Mail | undefined;
  await expect
    .poll(
      () => {
        const mails = fs
          .readFileSync(f.mailsFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Mail);
        found = mails.slice(after).find((m) => m.envelopeTo.includes(address) && match.test(m.subject));
        return !!found;
      },
      { timeout: 20_000 },
    )
    .toBe(true);
  return found!;
}
const mailCount = () => fs.readFileSync(f.mailsFile, 'utf8').split('\n').filter(Boolean).length;
const linkIn = (m: Mail, path: string) => new URL(m.text.match(new RegExp(`https?://\\S+${path}\\S+`))![0]).pathname;
const code = (secret: string, offsetSeconds = 0) =>
  generate({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds, algorithm: 'sha1', digits: 6, period: 30 });

async function signOut(page: Page) {
  await page.getByRole('button', { name: 'Sign out' }).click();
  // The ended session also revokes the page's inbox socket, which sends the page to /login too: one of
  // the two navigations is aborted, so wait for where the page ends up rather than for one navigation.
  await expect(page).toHaveURL(/\/login/, { timeout: 15_000 });
}

const shots = (page: Page, name: string) => screenshotsAtBothWidths(page, name);

test('invite → mail → accept → the agent is signed in and gets the 404 page on what agents may not open', async ({ page, browser }) => {
  test.setTimeout(120_000);
  await signIn(page, f.gamma.email, f.gamma.password);
  await page.getByRole('link', { name: 'Team' }).click();
  await page.getByRole('button', { name: 'Invite member' }).click();
  await page.getByLabel('Email', { exact: true }).fill('new.agent@gamma.test');
  await page.getByLabel('Role', { exact: true }).selectOption('agent');
  await page.getByRole('button', { name: 'Send invitation' }).click();
  await expect(page.getByRole('status')).toContainText('Invitation sent to new.agent@gamma.test');
  await shots(page, 'team-invited');
  await page.reload();
  await expect(page.getByTestId('invitation-new.agent@gamma.test')).toContainText('agent');
  await shots(page, 'team');

  const mail = await mailTo('new.agent@gamma.test', /invited/);
  expect(mail.html).toContain('Accept invitation');
  const link = linkIn(mail, '/invite/');
  const invitee = await browser.newContext();
  const p2 = await invitee.newPage();
  await p2.goto(link);
  await expect(p2.getByRole('heading', { name: 'Join Gamma Team' })).toBeVisible();
  await p2.getByLabel('Name').fill('Nina Agent');
  await p2.getByLabel('Password').fill('nina agent password');
  await p2.getByRole('button', { name: 'Join team' }).click();
  await p2.waitForURL((u) => u.pathname === '/');
  await expect(p2.getByRole('heading', { name: 'Overview' })).toBeVisible();
  const nav = p2.getByRole('navigation', { name: 'Main' });
  await expect(nav.getByRole('link', { name: 'Conversations' })).toBeVisible();
  for (const hidden of ['API keys', 'Webhooks', 'Bot', 'Team', 'Widget', 'Audit log'])
    await expect(nav.getByRole('link', { name: hidden, exact: true })).toHaveCount(0);
  for (const path of ['/api-keys', '/webhooks', '/bot', '/team', '/widget', '/audit']) {
    const res = await p2.goto(path);
    expect(res?.status(), path).toBe(404);
    await expect(p2.getByRole('heading', { name: 'Not found' })).toBeVisible();
  }
  // The gaps are an agent's to read, not to answer: no buttons that would only be refused.
  await p2.goto('/insights/gaps');
  await expect(p2.getByText('An owner or admin can add answers and synonyms for them.')).toBeVisible();
  await expect(p2.getByRole('button', { name: /Add answer|Add synonym|Dismiss/ })).toHaveCount(0);
  await p2.goto(link);
  await expect(p2.getByRole('heading', { name: 'Invitation not valid' })).toBeVisible();
  await invitee.close();

  await page.reload();
  await expect(page.getByTestId('member-new.agent@gamma.test')).toContainText('Nina Agent');
  await expect(page.getByTestId('invitation-new.agent@gamma.test')).toHaveCount(0);

  // The audit log (docs/contracts.md §18) names who invited whom, from which address, and who joined.
  await page.goto('/audit');
  const invited = page.locator('.gridjs-tbody tr', { hasText: 'member.invited' }).filter({ hasText: 'new.agent@gamma.test' });
  await expect(invited).toContainText(f.gamma.email);
  await expect(invited).toContainText(/127\.0\.0\.1/);
  await expect(page.locator('.gridjs-tbody tr', { hasText: 'member.joined' }).filter({ hasText: 'new.agent@gamma.test' })).toHaveCount(1);
  await page.getByLabel('Action').selectOption('member.invited');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page).toHaveURL(/action=member\.invited/);
  await expect(page.locator('.gridjs-tbody tr', { hasText: 'member.joined' })).toHaveCount(0);
  await shots(page, 'audit');
});

test('password reset: the same answer for any address, a link that works once, the new password signs in', async ({ page }) => {
  const before = mailCount();
  await page.goto('/login');
  await page.getByRole('link', { name: 'Forgot password?' }).click();
  await page.getByLabel('Email').fill('nobody@gamma.test');
  await page.getByRole('button', { name: 'Send reset link' }).click();
  const answer = await page.getByRole('status').textContent();
  await page.goto('/forgot-password');
  await page.getByLabel('Email').fill('forgetful@gamma.test');
  await page.getByRole('button', { name: 'Send reset link' }).click();
  await expect(page.getByRole('status')).toHaveText(answer!);
  const mail = await mailTo('forgetful@gamma.test', /password/i, before);
  const link = linkIn(mail, '/reset-password/');
  await page.goto(link);
  await page.getByLabel('New password').fill('a fresh password 4');
  await page.getByRole('button', { name: 'Set new password' }).click();
  await expect(page.getByRole('status')).toContainText('Your password is changed');
  await page.goto(link);
  await expect(page.locator('p.error[role=alert]')).toContainText('not valid any more');
  await signIn(page, 'forgetful@gamma.test', 'a fresh password 4');
  await expect(page.getByRole('heading', { name: 'Overview' })).toBeVisible();
});

test('the reset form works before (or without) the page script: the form posted as it is gets the same answer', async ({ browser }) => {
  // A slow connection clicks before hydration; the server action runs from the form's own fields.
  const context = await browser.newContext({ javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await page.goto('/forgot-password');
    await page.getByLabel('Email').fill('nobody-nojs@gamma.test');
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await expect(page.getByRole('status')).toContainText('we have sent it a link to choose a new password');
  } finally {
    await context.close();
  }
});

test('two-factor: set up with a computed code, then sign in with a code, with a recovery code, and a replayed code is refused', async ({ page }) => {
  await signIn(page, 'admin2@gamma.test', 'gamma-admin-pw-2');
  await page.getByRole('link', { name: 'Profile' }).click();
  // Set-up asks for the password first: a wrong one is refused and shows no secret.
  await page.getByLabel('Your password').fill('not my password');
  await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
  await expect(page.locator('p.error[role=alert]')).toContainText('The password is not right.');
  await expect(page.getByTestId('totp-secret')).toHaveCount(0);
  await page.getByLabel('Your password').fill('gamma-admin-pw-2');
  await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
  await expect(page.getByRole('img', { name: 'QR code for your authenticator app' })).toBeVisible();
  const secret = (await page.getByTestId('totp-secret').textContent())!.trim();
  await shots(page, 'profile');
  await page.getByLabel('Authentication code').fill(await code(secret));
  await page.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
  const codes = page.getByTestId('recovery-codes').locator('li');
  await expect(codes).toHaveCount(10);
  const recovery = (await codes.nth(0).textContent())!;
  await signOut(page);

  const passwordStep = async () => {
    await page.goto('/login');
    await page.getByLabel('Email').fill('admin2@gamma.test');
    await page.getByLabel('Password').fill('gamma-admin-pw-2');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByLabel('Authentication code')).toBeVisible();
    expect((await page.context().cookies()).some((c) => c.name.includes('session-token'))).toBe(false);
  };
  await passwordStep();
  const next = await code(secret, 30); // the set-up used this time step's code
  await page.getByLabel('Authentication code').fill(next);
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.waitForURL((u) => u.pathname === '/');
  await signOut(page);

  await passwordStep();
  await page.getByLabel('Authentication code').fill(next);
  await page.getByRole('button', { name: 'Verify' }).click();
  await expect(page.locator('p.error[role=alert]')).toHaveText('That code is not valid or was already used.');
  await expect(page).toHaveURL(/\/login/);
  await page.getByLabel('Authentication code').fill(recovery);
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.waitForURL((u) => u.pathname === '/');
  await page.goto('/profile');
  await expect(page.getByText('Recovery codes left: 9.')).toBeVisible();
  await signOut(page);
});

test('the owner requires two-factor: a member without it is sent to /profile before any other page', async ({ page }) => {
  await signIn(page, f.gamma.email, f.gamma.password);
  await page.goto('/team');
  await expect(page.getByTestId('member-admin2@gamma.test')).toContainText('on');
  await page.getByLabel('Require two-factor authentication').check();
  await page.getByRole('button', { name: 'Save security settings' }).click();
  // The owner has no two-factor yet: the saved setting already applies to them.
  await expect(page).toHaveURL(/\/profile$/);
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link')).toHaveText(['Profile']);
  for (const path of ['/', '/conversations', '/team']) {
    await page.goto(path);
    await expect(page).toHaveURL(/\/profile$/);
  }
  await expect(page.locator('p.error[role=alert]')).toContainText('requires two-factor authentication');
  await page.getByLabel('Your password').fill(f.gamma.password);
  await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
  const secret = (await page.getByTestId('totp-secret').textContent())!.trim();
  await page.getByLabel('Authentication code').fill(await code(secret));
  await page.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
  await expect(page.getByTestId('recovery-codes').locator('li')).toHaveCount(10);
  await page.goto('/conversations');
  await expect(page).toHaveURL(/\/conversations$/);
});
