import { z } from 'zod';
import { normalizeDomain } from '../auth/domains';
import { AccountId } from '../accounts/contract';
import { VISITOR_ID_RE } from '../auth/widget-tokens';

export const Domain = z.string().transform((d, ctx) => {
  const n = normalizeDomain(d);
  if (!n) { ctx.addIssue({ code: 'custom', message: `"${d}" is not a host name (example.com or *.example.com)` }); return z.NEVER; }
  return n;
});

export const CreateWidgetClientInput = z.object({
  accountId: AccountId,
  domains: z.array(Domain).min(1, 'give at least one --domain').max(100),
  channelId: z.coerce.number().int().min(1).max(2_147_483_647).optional(),
});

export const TokenRequest = z.object({
  client_id: z.string({ error: 'is required' }).regex(/^wc_[0-9A-Za-z]{12,64}$/, 'is not a client id'),
  client_secret: z.string().max(200).optional(),
  visitor_id: z.string().regex(VISITOR_ID_RE, 'is not a visitor id (v_ and 16-64 letters, digits, _ or -)').optional(),
}).meta({ id: 'WidgetTokenRequest' });

export const TokenResponse = z.object({
  access_token: z.string(), token_type: z.literal('Bearer'), expires_in: z.int(), visitor_id: z.string(),
}).meta({ id: 'WidgetTokenResponse' });
