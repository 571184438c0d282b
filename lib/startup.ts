import { boundStatementTime, closeDatabase, getDatabase } from '../db/client';
import { countAccounts } from '../db/queries/accounts';
import { flushApiKeyUsage } from './auth/customer-api';
import { seedDemoAccount, type DemoAccount } from './demo/seed';
import { getEnv } from './env';

/**
 * Opens the database (applying migrations) and, on the very first start of an empty embedded
 * database, creates the demo account. Returns it so the caller can print the login once.
 */
export async function prepareDatabase(): Promise<{ kind: 'pglite' | 'postgres'; demo: DemoAccount | null }> {
  const env = getEnv();
  boundStatementTime();
  const database = await getDatabase();
  let demo: DemoAccount | null = null;
  if (database.kind === 'pglite' && env.SVC_DEMO && (await countAccounts(database.db)) === 0) {
    demo = await seedDemoAccount();
  }
  return { kind: database.kind, demo };
}

export async function shutdownDatabase(): Promise<void> {
  await flushApiKeyUsage();
  await closeDatabase();
}
