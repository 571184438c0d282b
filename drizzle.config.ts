import { defineConfig } from 'drizzle-kit';

// Only `drizzle-kit generate` is used; migrations are applied at run time by db/migrate.ts.
export default defineConfig({
  dialect: 'postgresql',
  schema: './db/schema/index.ts',
  out: './db/migrations',
});
