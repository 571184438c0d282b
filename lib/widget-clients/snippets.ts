/**
 * The embed snippets the dashboard's /widget page generates (and the browser test pastes as is).
 * Pure and free of Node imports: it runs in the client component. Every value an admin types
 * is written as a JSON string literal with `<` escaped, so it cannot end the <script> element.
 */
export type TokenMode = 'client-id' | 'backend-node' | 'backend-fetch';
export type SnippetOptions = {
  origin: string;
  clientId: string;
  selector: { kind: 'track'; track: string } | { kind: 'version'; version: string };
  mode: TokenMode;
  botName?: string;
  headerChatName?: string;
  welcomeTitle?: string;
  welcomeDescription?: string;
  defaultQuestions?: string[];
  enableFileUpload?: boolean;
  colors?: { primary: string; background: string } | null;
};

/** The path on the integrator's site that the backend snippet serves and the page snippet names. */
export const TOKEN_PATH = '/api/svc-token';

const lit = (s: string) =>
  JSON.stringify(s)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
const COLOR = /^#[0-9a-fA-F]{6}$/;

export function pageSnippet(o: SnippetOptions): string {
  const lines: string[] = [];
  if (o.mode === 'client-id') lines.push(`svcClientId: ${lit(o.clientId)},`);
  else lines.push(`// your backend answers GET ${TOKEN_PATH} with { "access_token": "…" } (code below)`, `tokenEndpoint: ${lit(TOKEN_PATH)},`);
  const botName = o.botName?.trim() || 'Assistant';
  lines.push(`botName: ${lit(botName)},`);
  if (o.headerChatName?.trim()) lines.push(`headerChatName: ${lit(o.headerChatName.trim())},`);
  const title = o.welcomeTitle?.trim();
  const description = o.welcomeDescription?.trim();
  if (title || description) {
    const parts = [title ? `title: ${lit(title)}` : '', description ? `description: ${lit(description)}` : ''].filter(Boolean);
    lines.push(`advancedWelcomeText: { ${parts.join(', ')} },`);
  }
  const questions = (o.defaultQuestions ?? []).map((q) => q.trim()).filter(Boolean);
  if (questions.length) lines.push(`defaultQuestions: [${questions.map(lit).join(', ')}],`);
  if (o.enableFileUpload) lines.push('enableFileUpload: true,');
  const out = ['<script>', '  window.svcAIConfig = {', ...lines.map((l) => `    ${l}`), '  };', '</script>'];
  const c = o.colors;
  if (c && COLOR.test(c.primary) && COLOR.test(c.background)) {
    out.push('<style>', `  :root { --svc-custom-primary-color: ${c.primary}; --svc-custom-background-color: ${c.background}; }`, '</style>');
  }
  const attr = o.selector.kind === 'track' ? `data-track="${attrSafe(o.selector.track)}"` : `data-version="${attrSafe(o.selector.version)}"`;
  out.push(`<script async src="${attrSafe(o.origin)}/chatbot/loader.js" ${attr}></script>`);
  return out.join('\n');
}

const attrSafe = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/**
 * The integrator's token endpoint, as a file they save and mount as is: GET (the widget fetches
 * `tokenEndpoint` with GET), the secret from the environment, only the token passed on.
 */
export function backendSnippet(o: Pick<SnippetOptions, 'origin' | 'clientId'> & { mode: Exclude<TokenMode, 'client-id'> }): string {
  const request = [
    `  const r = await fetch(${lit(`${o.origin}/api/widget/token`)}, {`,
    `    method: 'POST',`,
    `    headers: { 'content-type': 'application/json' },`,
    `    // add visitor_id: '<your user id>' to keep a signed-in user's conversations across devices`,
    `    body: JSON.stringify({ client_id: ${lit(o.clientId)}, client_secret: process.env.SVC_CLIENT_SECRET }),`,
    `  });`,
    `  const body = await r.json().catch(() => ({}));`,
    `  const answer = r.ok ? { access_token: body.access_token, expires_in: body.expires_in } : { error: body.detail || 'token request failed' };`,
  ];
  if (o.mode === 'backend-node') {
    return [
      `// svc-token.mjs: GET ${TOKEN_PATH} on your site (Node 18+, no dependencies).`,
      `// Set SVC_CLIENT_SECRET in the server's environment; the secret never reaches the browser.`,
      `// Express:   app.get('${TOKEN_PATH}', svcToken)`,
      `// node:http: if (req.method === 'GET' && req.url.split('?')[0] === '${TOKEN_PATH}') return svcToken(req, res);`,
      `export async function svcToken(req, res) {`,
      `  // Check your own session here when only signed-in visitors may chat.`,
      ...request,
      `  res.writeHead(r.ok ? 200 : 502, { 'content-type': 'application/json', 'cache-control': 'no-store' });`,
      `  res.end(JSON.stringify(answer));`,
      `}`,
    ].join('\n');
  }
  return [
    `// app${TOKEN_PATH}/route.js in Next.js (App Router); the same GET works in Hono, Deno, Bun and Workers.`,
    `// Set SVC_CLIENT_SECRET in the server's environment; the secret never reaches the browser.`,
    `export async function GET(request) {`,
    `  // Check your own session here when only signed-in visitors may chat.`,
    ...request,
    `  return Response.json(answer, { status: r.ok ? 200 : 502, headers: { 'cache-control': 'no-store' } });`,
    `}`,
  ].join('\n');
}
