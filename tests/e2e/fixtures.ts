import fs from 'node:fs';
import path from 'node:path';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, type Page } from '@playwright/test';

type AccountFixture = { accountId: number; email: string; password: string; key: string; conversations: string[]; channels: number[] };
export type Fixtures = {
  alpha: AccountFixture;
  beta: AccountFixture;
  gamma: AccountFixture;
  mailsFile: string;
  widget: { client_id: string; client_secret: string };
  elsewhere: { client_id: string; client_secret: string };
  dataDir: string;
  /** svc's inbound SMTP listener (INBOUND_SMTP_PORT=0: a free port), written once the server has started. */
  inboundSmtpPort?: number | null;
};

export function fixtures(file = 'tests/artifacts/e2e-fixtures.json'): Fixtures {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

export async function signIn(page: Page, email: string, password: string) {
  await page.goto('/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
}

export async function screenshot(page: Page, name: string) {
  const dir = 'tests/artifacts/screenshots';
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

/** Full-page screenshots `<name>-desktop` (1366 px) and `<name>-phone` (390 px), `check` at each width, then back to desktop. */
export async function screenshotsAtBothWidths(page: Page, name: string, check: (width: number) => Promise<void> = async () => {}) {
  for (const [label, width] of [
    ['desktop', 1366],
    ['phone', 390],
  ] as const) {
    await page.setViewportSize({ width, height: 900 });
    await screenshot(page, `${name}-${label}`);
    await check(width);
  }
  await page.setViewportSize({ width: 1366, height: 900 });
}

/**
 * Asks questions as a widget visitor (client-secret token, socket.io) in one conversation and
 * waits for each answer; returns the conversation id.
 */
export async function askAsVisitor(baseURL: string, client: { client_id: string; client_secret: string }, questions: string[]): Promise<string> {
  const { io } = await import('socket.io-client');
  const tokenRes = await fetch(`${baseURL}/api/widget/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: client.client_id, client_secret: client.client_secret }),
  });
  const { access_token: token } = await tokenRes.json();
  const socket = io(`${baseURL}/widget`, { auth: { token }, extraHeaders: { origin: 'http://127.0.0.1:9' }, transports: ['websocket'] });
  try {
    let conversationId = '';
    await new Promise<void>((resolve, reject) => {
      socket.on('connect', resolve);
      socket.on('connect_error', reject);
    });
    for (const [i, text] of questions.entries()) {
      conversationId = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer to question ${i + 1}`)), 20_000);
        const onEvent = (e: { type: string; conversation_id: string }) => {
          if (e.type === 'answer.done' || e.type === 'answer.error') {
            clearTimeout(timer);
            socket.off('event', onEvent);
            resolve(e.conversation_id);
          }
        };
        socket.on('event', onEvent);
        socket.emit('ask', { client_message_id: `journey-${Date.now()}-${i}`, text, ...(conversationId ? { conversation_id: conversationId } : {}) }, () => {});
      });
    }
    return conversationId;
  } finally {
    socket.close();
  }
}

/** Every console error and uncaught page error of a page, collected for an assertion at the end. */
export function collectConsoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`${page.url()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  return errors;
}

/** A real receiver on 127.0.0.1 (the e2e server allows private networks). */
export async function startReceiver(path = '/hooks/svc') {
  const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req
      .setEncoding('utf8')
      .on('data', (c: string) => {
        body += c;
      })
      .on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { received, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`, close: () => server.close() };
}

/** A widget visitor asks a question, then presses "Talk to a person" (the widget's `handoff:request`). */
export async function visitorAsksForAPerson(baseURL: string, client: { client_id: string; client_secret: string }, text: string) {
  const res = await fetch(`${baseURL}/api/widget/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: client.client_id, client_secret: client.client_secret }),
  });
  const { access_token: token } = await res.json();
  const { io } = await import('socket.io-client');
  const socket = io(`${baseURL}/widget`, { auth: { token }, extraHeaders: { origin: 'http://127.0.0.1:9' }, transports: ['websocket'] });
  await new Promise<void>((resolve, reject) => {
    socket.on('connect', resolve);
    socket.on('connect_error', reject);
  });
  const asked = await socket.timeout(20_000).emitWithAck('ask', { client_message_id: `inbox-${Date.now()}`, text });
  expect(asked.ok, JSON.stringify(asked)).toBe(true);
  return {
    conversationId: asked.conversation_id as string,
    pressTalkToAPerson: async () => {
      const ack = await socket.timeout(20_000).emitWithAck('handoff:request', { conversation_id: asked.conversation_id });
      expect(ack.ok, JSON.stringify(ack)).toBe(true);
      expect(ack.status).toBe('Waiting');
    },
    close: () => socket.close(),
  };
}
