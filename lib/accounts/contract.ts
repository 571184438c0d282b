import { z } from 'zod';
import { RoleSchema } from '../auth/roles';

export const AccountName = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
export const Email = z.string().trim().toLowerCase().pipe(z.email('must be an email address')).pipe(z.string().max(320));
export const Password = z.string().min(8, 'must be at least 8 characters').max(1024, 'must be at most 1024 characters');
export const AccountId = z.coerce
  .number({ error: 'must be an account id (a positive integer)' })
  .int('must be an account id (a positive integer)')
  .min(1, 'must be an account id (a positive integer)')
  .max(2_147_483_647, 'must be an account id (a positive integer)');
export const KeyName = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
export const KeyEnvSchema = z.enum(['live', 'test'], { error: 'must be live or test' });

export const CreateAccountInput = z.object({ name: AccountName, adminEmail: Email, adminPassword: Password });
export const CreateApiKeyInput = z.object({ accountId: AccountId, name: KeyName.optional(), env: KeyEnvSchema.optional() });
export const MemberName = z.string().trim().max(100, 'must be at most 100 characters');
export const CreateUserInput = z.object({
  accountId: AccountId,
  email: Email,
  password: Password,
  role: RoleSchema.default('admin'),
  name: MemberName.optional(),
});
