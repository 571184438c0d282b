import { getDatabase } from '../db/client';
import { pingDatabase } from '../db/queries/health';

export async function checkHealth() {
  const database = await getDatabase();
  await pingDatabase(database.db);
  return { status: 'ok', database: database.kind };
}
