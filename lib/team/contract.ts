import { z } from 'zod';
import { Email, MemberName, Password } from '../accounts/contract';
import { RoleSchema } from '../auth/roles';

export const InviteInput = z.object({ email: Email, role: RoleSchema.exclude(['owner'], { error: 'must be admin or agent' }) });
export const ChangeRoleInput = z.object({
  userId: z.coerce.number().int().positive(),
  role: RoleSchema.exclude(['owner'], { error: 'must be admin or agent (ownership is transferred)' }),
});
export const MemberIdInput = z.object({ userId: z.coerce.number().int().positive() });
export const InvitationIdInput = z.object({ id: z.uuid('must be an invitation id') });
export const AcceptInvitationInput = z.object({ name: MemberName.min(1, 'must not be empty'), password: Password });
