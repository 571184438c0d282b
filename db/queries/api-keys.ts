import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { preparedRows } from './prepared';
import { apiKeys } from '../schema';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export async function insertApiKey(db: Db, accountId: number, v: { keyId: string; name: string; env: string; secretHash: Uint8Array }) {
  const [row] = await db
    .insert(apiKeys)
    .values({ accountId, ...v })
    .returning();
  return row!;
}

/** Not tenant-scoped on purpose: the key id is how a request finds its tenant. */
export async function getApiKeyForAuth(db: Db, keyId: string) {
  const [row] = await preparedRows<{ keyId: string; accountId: number; env: string; secretHash: Uint8Array; revokedAt: string | null }>(
    db,
    sql`
    SELECT key_id AS "keyId", account_id AS "accountId", env, secret_hash AS "secretHash", revoked_at::text AS "revokedAt"
    FROM api_keys WHERE key_id = ${keyId}`,
  );
  return row ?? null;
}

export async function listApiKeys(db: Db, accountId: number) {
  return db
    .select({
      keyId: apiKeys.keyId,
      name: apiKeys.name,
      env: apiKeys.env,
      createdAt: apiKeys.createdAt,
      lastUsedAt: apiKeys.lastUsedAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .where(eq(apiKeys.accountId, accountId))
    .orderBy(apiKeys.createdAt);
}

/** Revokes by key id; `accountId` null only for the operator CLI, which may revoke any key. `revoked`: by this call. */
export async function revokeApiKey(db: Db, accountId: number | null, keyId: string) {
  const cond = accountId === null ? eq(apiKeys.keyId, keyId) : and(eq(apiKeys.keyId, keyId), eq(apiKeys.accountId, accountId));
  const [existing] = await db
    .select({ keyId: apiKeys.keyId, accountId: apiKeys.accountId, name: apiKeys.name, revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .where(cond)
    .for('update');
  if (!existing) return null;
  if (!existing.revokedAt) {
    await db
      .update(apiKeys)
      .set({ revokedAt: sql`now()` })
      .where(and(cond, isNull(apiKeys.revokedAt)));
  }
  return { keyId: existing.keyId, accountId: existing.accountId, name: existing.name, revoked: !existing.revokedAt };
}

/** One statement for many keys: last_used_at only moves forward. */
export async function recordApiKeysUsed(db: Db, uses: Array<{ keyId: string; at: Date }>) {
  if (uses.length === 0) return;
  const values = sql.join(
    uses.map((u) => sql`(${u.keyId}, ${u.at.toISOString()}::timestamptz)`),
    sql`, `,
  );
  await db.execute(sql`
    UPDATE api_keys k SET last_used_at = v.at
    FROM (VALUES ${values}) AS v(key_id, at)
    WHERE k.key_id = v.key_id AND (k.last_used_at IS NULL OR k.last_used_at < v.at)`);
}
