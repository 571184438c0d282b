import { randomBytes } from 'node:crypto';
import { getDb } from '../../db/client';
import { getOrCreateSetting } from '../../db/queries/settings';
import { getEnv, nextAuthUrl, provideNextAuthEnv } from '../env';

/**
 * next-auth reads NEXTAUTH_SECRET and NEXTAUTH_URL itself. When the operator sets neither, the
 * server provides them before Next starts: a secret generated once and kept in the database (so
 * every process and every restart agree), and http://localhost:PORT.
 */
export async function provideSessionSecret(): Promise<void> {
  if (!getEnv().NEXTAUTH_SECRET) {
    provideNextAuthEnv({ secret: await getOrCreateSetting(await getDb(), 'nextauth_secret', randomBytes(32).toString('base64url')) });
  }
}

/** Called once the real port is known (PORT=0 picks one). */
export function provideSessionUrl(port: number): void {
  if (!getEnv().NEXTAUTH_URL) provideNextAuthEnv({ url: `http://localhost:${port}` });
}

/** An absolute link into the dashboard (emailed links), on the address next-auth uses. */
export function dashboardUrl(path: string): string {
  const base = nextAuthUrl() ?? `http://localhost:${getEnv().PORT}`;
  return `${base.replace(/\/+$/, '')}${path}`;
}
