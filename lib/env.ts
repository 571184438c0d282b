import { z } from 'zod';

/** The only reader of process.env. Parsed once; a bad value stops the process with a clear message. */
const boolish = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1).default('0.0.0.0'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://').optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  SVC_DEMO: boolish.default(true),
  SVC_ENV: z.enum(['live', 'test']).default('live'),
  /** How often the in-memory last_used_at marks of API keys are written (ms). */
  API_KEY_USAGE_FLUSH_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  LOG_REQUESTS: boolish.default(false),
});

export type Env = z.infer<typeof EnvSchema>;

let cached: Env | undefined;

export function getEnv(): Env {
  if (cached) return cached;
  const raw: Record<string, string | undefined> = {};
  for (const key of Object.keys(EnvSchema.shape)) {
    const value = process.env[key];
    raw[key] = value === '' ? undefined : value;
  }
  const parsed = EnvSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid environment: ${lines.join('; ')}`);
  }
  cached = parsed.data;
  return cached;
}
