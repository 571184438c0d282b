/** Opens (and so migrates) the database the environment names, then closes it: the runner's templates. */
import { closeDatabase, getDatabase } from '../../db/client';

void (async () => {
  await getDatabase();
  await closeDatabase();
})();
