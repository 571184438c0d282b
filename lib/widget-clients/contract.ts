import { z } from 'zod';
import { normalizeDomain } from '../auth/domains';
import { AccountId } from '../accounts/contract';
import { VISITOR_ID_RE } from '../auth/widget-tokens';

/**
 * What an admin pastes into the domain box, reduced to the registered form: a URL
 * (`https://shop.example/path`) becomes its host, a port or a trailing dot is dropped (any port
 * matches), a Unicode name becomes its ASCII (punycode) form. Anything else is refused with the
 * reason, never split or guessed at.
 */
export function reduceDomainInput(raw: string): { domain: string } | { error: string } {
  const input = raw.trim();
  const shown = JSON.stringify(input.length > 80 ? `${input.slice(0, 80)}…` : input);
  if (!input) return { error: 'is empty' };
  if (/\s/.test(input)) return { error: `${shown} contains a space: give one domain per line` };
  let host = input.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  if (host !== input && /^[a-z][a-z0-9+.-]*:\/\//i.test(input) && !/^https?:/i.test(input))
    return { error: `${shown}: only http(s) addresses have a host to register` };
  host = host.split(/[/?#]/, 1)[0]!;
  if (host.includes('@')) host = host.slice(host.lastIndexOf('@') + 1);
  if (host.startsWith('[')) return { error: `${shown}: IP v6 addresses cannot be registered; use a host name` };
  host = host.replace(/:\d{1,5}$/, '').replace(/\.+$/, '');
  const wildcard = host.startsWith('*.') || host === '*';
  let bare = wildcard ? host.slice(2) : host;
  if (/[^\x00-\x7f]/.test(bare)) {
    try {
      bare = new URL(`http://${bare}`).hostname;
    } catch {
      return { error: `${shown} is not a host name` };
    }
  }
  if (wildcard && !bare.includes('.')) return { error: `${shown}: a wildcard needs a domain of two labels or more (*.example.com)` };
  if (bare.includes('*')) return { error: `${shown}: a wildcard may only start the name (*.example.com)` };
  const n = normalizeDomain(wildcard ? `*.${bare}` : bare);
  if (!n) return { error: `${shown} is not a host name (letters, digits and hyphens between dots, e.g. example.com or *.example.com)` };
  return { domain: n };
}

export const Domain = z.string().transform((d, ctx) => {
  const r = reduceDomainInput(d);
  if ('error' in r) {
    ctx.addIssue({ code: 'custom', message: r.error });
    return z.NEVER;
  }
  return r.domain;
});

/** The dashboard's domain box: one domain per line (commas also separate); spaces inside a line are refused. */
export function splitDomainBox(text: string): string[] {
  return text
    .split(/[\n,]+/)
    .map((d) => d.trim())
    .filter(Boolean);
}

export const ClientName = z.string().trim().min(1, 'give the client a name').max(80, 'at most 80 characters');

export const CreateWidgetClientInput = z.object({
  accountId: AccountId,
  /** Default: the first domain. */
  name: ClientName.optional(),
  domains: z.array(Domain).min(1, 'give at least one --domain').max(100),
  channelId: z.coerce.number().int().min(1).max(2_147_483_647).optional(),
});

export const TokenRequest = z
  .object({
    client_id: z.string({ error: 'is required' }).regex(/^wc_[0-9A-Za-z]{12,64}$/, 'is not a client id'),
    client_secret: z.string().max(200).optional(),
    visitor_id: z.string().regex(VISITOR_ID_RE, 'is not a visitor id (v_ and 16-64 letters, digits, _ or -)').optional(),
  })
  .meta({ id: 'WidgetTokenRequest' });
