/** Dashboard sign-in and sign-out over HTTP, the way next-auth's client does it (CSRF token + form POST). */

export type SignInResult = { status: number; ok: boolean; error: string | null; url: string | null; cookie: string | null; setCookies: string[]; ms: number };

function cookiesOf(res: Response): string[] {
  return res.headers.getSetCookie();
}
const pair = (setCookie: string) => setCookie.split(';')[0]!;

async function csrf(base: string, headers: Record<string, string>, cookie?: string) {
  const res = await fetch(`${base}/api/auth/csrf`, { headers: { ...headers, ...(cookie ? { cookie } : {}) } });
  const { csrfToken } = (await res.json()) as { csrfToken: string };
  const set = cookiesOf(res).map(pair);
  return { csrfToken, cookie: [cookie, ...set].filter(Boolean).join('; ') };
}

export async function signIn(base: string, email: string, password: string, headers: Record<string, string> = {}, callbackUrl = '/'): Promise<SignInResult> {
  return signInWith(base, { email, password }, headers, callbackUrl);
}

/** Any step of signing in: { email, password }, or { ticket, code } (two-factor), or { ticket } (an accepted invitation). */
export async function signInWith(base: string, fields: Record<string, string>, headers: Record<string, string> = {}, callbackUrl = '/'): Promise<SignInResult> {
  const c = await csrf(base, headers);
  const started = Date.now();
  const res = await fetch(`${base}/api/auth/callback/credentials`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...headers, cookie: c.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrfToken: c.csrfToken, ...fields, callbackUrl, json: 'true' }),
  });
  const ms = Date.now() - started;
  const body = (await res.json().catch(() => null)) as { url?: string } | null;
  const url = body?.url ?? null;
  const error = url ? new URL(url).searchParams.get('error') : `HTTP ${res.status}`;
  const setCookies = cookiesOf(res);
  const session = setCookies.find((s) => s.startsWith('next-auth.session-token='));
  return { status: res.status, ok: !error && !!session, error, url, cookie: session ? pair(session) : null, setCookies, ms };
}

export async function signOut(base: string, sessionCookie: string, headers: Record<string, string> = {}): Promise<number> {
  const c = await csrf(base, headers, sessionCookie);
  const res = await fetch(`${base}/api/auth/signout`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...headers, cookie: c.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrfToken: c.csrfToken, callbackUrl: '/login', json: 'true' }),
  });
  await res.text();
  return res.status;
}
