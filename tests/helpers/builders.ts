/** Test data through the same services the CLI and the demo seed use. */
import { CLI } from '../../lib/audit/contract';
import { randomUUID } from 'node:crypto';
import { createAccount, createApiKey } from '../../lib/accounts/service';
import { importNdjson } from '../../lib/imports/service';
import { getDb } from '../../db/client';

export type TestAccount = { accountId: number; key: string; keyId: string; email: string; password: string };

export async function createTestAccount(name = 'Test Co'): Promise<TestAccount> {
  const email = `admin-${randomUUID()}@example.test`;
  const password = 'correct horse battery';
  const account = await createAccount({ name, adminEmail: email, adminPassword: password });
  const key = await createApiKey(CLI, { accountId: account.account_id, name: 'test key' });
  return { accountId: account.account_id, key: key.key, keyId: key.key_id, email, password };
}

/**
 * Channel ids for a test's import lines. Channel ids belong to their account (docs/contracts.md §3), so
 * any numbers do; distinct ones keep a test's channels apart even when it imports into several accounts.
 */
let nextChannelId = 1000 + Math.floor(Math.random() * 1_000_000_000);
export async function newChannelIds(n: number): Promise<number[]> {
  return Array.from({ length: n }, () => nextChannelId++);
}

export type ConversationLine = {
  type: 'conversation';
  conversation_id: string;
  title: string;
  status: string;
  channel_id: number;
  channel_name: string;
  created_at: string;
  updated_at: string;
};
export type ResponseLine = {
  type: 'response';
  response_id: string;
  conversation_id: string;
  question: string;
  answer: string;
  channel_id: number;
  created_at: string;
  likes: number;
  dislikes: number;
  comments: number;
};

export function conversationLine(over: Partial<ConversationLine> & { channel_id: number }): ConversationLine {
  return {
    type: 'conversation',
    conversation_id: randomUUID(),
    title: 'A conversation',
    status: 'Open',
    channel_name: `Channel ${over.channel_id}`,
    created_at: '2026-01-01 10:00:00',
    updated_at: '2026-01-01 10:05:00',
    ...over,
  };
}

export function responseLine(conv: { conversation_id: string; channel_id: number }, over: Partial<ResponseLine> = {}): ResponseLine {
  return {
    type: 'response',
    response_id: randomUUID(),
    conversation_id: conv.conversation_id,
    question: 'A question?',
    answer: 'An answer.',
    channel_id: conv.channel_id,
    created_at: '2026-01-01 10:01:00',
    likes: 0,
    dislikes: 0,
    comments: 0,
    ...over,
  };
}

export async function importLines(accountId: number, lines: Array<object | string>) {
  return importNdjson(accountId, { lines: lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))) });
}

export function api(baseUrl: string, key?: string) {
  return async (pathAndQuery: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (key && !headers.has('authorization')) headers.set('authorization', `Bearer ${key}`);
    const method = (init.method ?? 'GET').toUpperCase();
    const res = await fetch(`${baseUrl}${pathAndQuery}`, { ...init, headers }).catch((e: Error & { cause?: { code?: string } }) => {
      // A kept-alive socket the server closed as the request left it (timers late on a busy machine):
      // like a browser, send an idempotent request once more on a new connection.
      if ((method === 'GET' || method === 'HEAD') && e.cause?.code === 'ECONNRESET') return fetch(`${baseUrl}${pathAndQuery}`, { ...init, headers });
      throw e;
    });
    const text = await res.text();
    let body: any = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    return { status: res.status, headers: res.headers, body };
  };
}
