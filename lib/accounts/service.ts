import type { z } from 'zod';
import { getDb, type Db } from '../../db/client';
import { getAccountById, insertAccount, insertAdminUser, lockAccountForWrite } from '../../db/queries/accounts';
import { getAccountOwner } from '../../db/queries/team';
import { publishInvalidation } from '../cache/invalidation';
import { insertApiKey, revokeApiKey as revokeApiKeyRow } from '../../db/queries/api-keys';
import { AppError } from '../core/errors';
import { generateApiKey } from '../auth/api-keys';
import { hashPassword } from '../auth/passwords';
import { getEnv } from '../env';
import { CreateAccountInput, CreateApiKeyInput, CreateUserInput } from './contract';
import { describeIssues, issueParams } from '../zod-issues';
import { recordAudit } from '../audit/service';
import type { AuditBy } from '../audit/contract';

/** Validates with a schema; the 400 names each field as the caller spelled it. */
export function validate<T extends z.ZodType>(schema: T, input: unknown, names: Record<string, string> = {}): z.infer<T> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const errors = issueParams(r.error, { names });
  throw new AppError('invalid_request', describeIssues(errors), { errors });
}

export async function requireAccount(db: Db, accountId: number) {
  const account = await getAccountById(db, accountId);
  if (!account) throw new AppError('not_found', `No account with id ${accountId}.`);
  return account;
}

export async function createAccount(input: z.input<typeof CreateAccountInput>) {
  const v = validate(CreateAccountInput, input, { adminEmail: 'admin-email', adminPassword: 'admin-password' });
  const { account_id, name, admin_email } = await createAccountWithOwner(await getDb(), {
    name: v.name,
    email: v.adminEmail,
    passwordHash: await hashPassword(v.adminPassword),
  });
  return { account_id, name, admin_email };
}

/** An account and its owner in one transaction (the CLI, the demo and a confirmed sign-up). */
export async function createAccountWithOwner(db: Db, v: { name: string; email: string; passwordHash: string; ownerName?: string }) {
  return db.transaction(async (tx) => {
    const account = await insertAccount(tx as unknown as Db, v.name);
    const user = await insertAdminUser(tx as unknown as Db, account.id, v.email, v.passwordHash, { role: 'owner', name: v.ownerName });
    if (!user) throw new AppError('conflict', `An admin with email ${v.email} already exists.`);
    return { account_id: account.id, name: account.name, admin_email: user.email, user_id: user.id };
  });
}

/** A member of an account (CLI `user create`); an account has one owner, so `owner` is refused when it has one. */
export async function createAdminUser(by: AuditBy, input: z.input<typeof CreateUserInput>) {
  const v = validate(CreateUserInput, input, { accountId: 'account' });
  const passwordHash = await hashPassword(v.password);
  const db = await getDb();
  return db.transaction(async (tx) => {
    const t = tx as unknown as Db;
    if (!(await lockAccountForWrite(t, v.accountId))) throw new AppError('not_found', `No account with id ${v.accountId}.`);
    if (v.role === 'owner' && (await getAccountOwner(t, v.accountId))) {
      throw new AppError('conflict', `Account ${v.accountId} already has an owner; the owner transfers ownership on /team.`);
    }
    const user = await insertAdminUser(t, v.accountId, v.email, passwordHash, { role: v.role, name: v.name });
    if (!user) throw new AppError('conflict', `A user with email ${v.email} already exists.`);
    await recordAudit(t, v.accountId, by, 'member.created', `${user.email} as ${v.role}`);
    return { user_id: user.id, account_id: user.accountId, email: user.email };
  });
}

/** Creates a key; the full key is in this return value only and never stored. */
export async function createApiKey(by: AuditBy, input: z.input<typeof CreateApiKeyInput>) {
  const v = validate(CreateApiKeyInput, input, { accountId: 'account' });
  const db = await getDb();
  await requireAccount(db, v.accountId);
  const env = v.env ?? getEnv().SVC_ENV;
  const { key, keyId, secretHash } = generateApiKey(env);
  const name = v.name ?? 'API key';
  await db.transaction(async (tx) => {
    await insertApiKey(tx as unknown as Db, v.accountId, { keyId, name, env, secretHash });
    await recordAudit(tx as unknown as Db, v.accountId, by, 'api_key.created', `${keyId} (${name})`);
  });
  return { key, key_id: keyId, account_id: v.accountId };
}

/** Revokes a key at once. `accountId` null is the operator's CLI; the dashboard passes its account. */
export async function revokeApiKey(by: AuditBy, accountId: number | null, keyId: string) {
  if (!/^[0-9A-Za-z]{12,64}$/.test(keyId)) {
    throw new AppError('invalid_request', 'key-id: must be the key id (12+ letters and digits)', {
      errors: [{ param: 'key-id', message: 'must be the key id (12+ letters and digits)' }],
    });
  }
  const done = await (await getDb()).transaction(async (tx) => {
    const row = await revokeApiKeyRow(tx as unknown as Db, accountId, keyId);
    if (row?.revoked) await recordAudit(tx as unknown as Db, row.accountId, by, 'api_key.revoked', `${row.keyId} (${row.name})`);
    return row;
  });
  if (!done) throw new AppError('not_found', `No API key with id ${keyId}.`);
  await publishInvalidation('api-key', done.keyId); // every instance drops its cached copy (lib/auth/customer-api.ts)
  return { key_id: done.keyId, revoked: true as const };
}
