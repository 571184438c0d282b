import { getDb, type Db } from '../../db/client';
import { countRecentMailsTo, insertMail, lockMailAddress, type MailInput } from '../../db/queries/mails';
export { NO_ACCOUNT } from '../../db/queries/mails';
import { getEnv } from '../env';
import { wakeMailWorker } from './worker';

/**
 * For mail a stranger can cause (password reset, sign-up): writes `mail` for `accountId` (and whatever `write`
 * stores with it) in one transaction, unless the address got MAILS_PER_ADDRESS_PER_HOUR mails in
 * the last hour. Serialised per address by an advisory lock, so the bound holds on every instance.
 */
export async function writeBoundedMail(accountId: number, mail: MailInput, write: (tx: Db) => Promise<void>): Promise<boolean> {
  const db = await getDb();
  const sent = await db.transaction(async (tx) => {
    const t = tx as unknown as Db;
    await lockMailAddress(t, mail.to);
    if ((await countRecentMailsTo(t, mail.to, 3600)) >= getEnv().MAILS_PER_ADDRESS_PER_HOUR) return false;
    await write(t);
    await insertMail(t, accountId, mail);
    return true;
  });
  if (sent) wakeMailWorker();
  return sent;
}
