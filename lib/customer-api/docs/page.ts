import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../../core/errors';
import { API_BASE } from '../operations';

/**
 * The API reference at /docs/api: Swagger UI over the public OpenAPI document, every asset served
 * from our own origin (no CDN, no inline script or style, so a strict CSP holds).
 */
const ASSET_BASE = '/docs/api/assets';

export function docsPageHtml(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc Customer API v2 — reference</title>
<link rel="icon" type="image/png" href="${ASSET_BASE}/favicon-32x32.png">
<link rel="stylesheet" href="${ASSET_BASE}/swagger-ui.css">
<link rel="stylesheet" href="${ASSET_BASE}/docs.css">
</head>
<body>
<header class="svc-docs-header">
  <strong>svc</strong> Customer API v2
  <a href="${API_BASE}/openapi.json">openapi.json</a>
</header>
<main id="swagger-ui" data-spec-url="${API_BASE}/openapi.json"></main>
<script src="${ASSET_BASE}/swagger-ui-bundle.js"></script>
<script src="${ASSET_BASE}/docs.js"></script>
</body>
</html>
`;
}

const INIT_JS = `window.addEventListener('load', function () {
  var root = document.getElementById('swagger-ui');
  window.svcApiDocs = SwaggerUIBundle({
    url: root.getAttribute('data-spec-url'),
    domNode: root,
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    displayOperationId: true,
    tryItOutEnabled: false,
    persistAuthorization: false,
    syntaxHighlight: { activated: true, theme: 'agate' }
  });
});
`;

const DOCS_CSS = `body { margin: 0; background: #fafafa; }
.svc-docs-header { display: flex; gap: 12px; align-items: baseline; flex-wrap: wrap; padding: 12px 20px;
  background: #1b1f24; color: #fff; font: 16px/1.4 system-ui, sans-serif; }
.svc-docs-header a { color: #9ecbff; margin-left: auto; font-size: 14px; }
.swagger-ui .wrapper { padding: 0 20px; box-sizing: border-box; }
.swagger-ui .info { margin: 24px 0; }
.swagger-ui .opblock .opblock-summary-path { word-break: break-word; }
.swagger-ui table.parameters { table-layout: fixed; width: 100%; }
.swagger-ui .parameters-col_name { width: 30%; }
.swagger-ui .parameter__name { overflow-wrap: anywhere; }
/* The API declares no OpenAPI links: the empty "Links" column only costs width. */
.swagger-ui .response-col_links { display: none; }
@media (max-width: 600px) {
  .swagger-ui .wrapper { padding: 0 8px; }
  .swagger-ui .info .title { font-size: 24px; }
  .swagger-ui .opblock .opblock-summary { flex-wrap: wrap; }
  .swagger-ui .opblock .opblock-summary-description { flex-basis: 100%; padding: 4px 0 0; }
  .swagger-ui .opblock-description-wrapper, .swagger-ui .opblock-external-docs-wrapper,
  .swagger-ui .opblock-title_normal, .swagger-ui .responses-inner { padding: 8px; }
  .swagger-ui .parameters-col_name { width: 42%; }
  .swagger-ui .parameter__name { overflow-wrap: normal; }
  .swagger-ui .parameter__name, .swagger-ui .parameter__type { font-size: 13px; }
  .swagger-ui .scheme-container { padding: 12px 0; }
}
`;

type Asset = { type: string; body: () => Promise<Buffer | string> };
const fromDist = (name: string) => () => readFile(path.join(process.cwd(), 'node_modules', 'swagger-ui-dist', name));

/** The only files served under /docs/api/assets; anything else is a 404. */
const ASSETS: Record<string, Asset> = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', body: fromDist('swagger-ui.css') },
  'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', body: fromDist('swagger-ui-bundle.js') },
  'favicon-32x32.png': { type: 'image/png', body: fromDist('favicon-32x32.png') },
  'docs.js': { type: 'text/javascript; charset=utf-8', body: async () => INIT_JS },
  'docs.css': { type: 'text/css; charset=utf-8', body: async () => DOCS_CSS },
};

const loaded = new Map<string, Promise<Buffer | string>>();

export async function docsAsset(name: string): Promise<Response> {
  const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  if (!asset) throw new AppError('not_found', `No documentation asset ${name.slice(0, 100)}.`);
  let body = loaded.get(name);
  if (!body) {
    body = asset.body();
    loaded.set(name, body);
    body.catch(() => loaded.delete(name));
  }
  return new Response(new Uint8Array(Buffer.from(await body)), {
    headers: { 'Content-Type': asset.type, 'Cache-Control': 'public, max-age=3600', 'X-Content-Type-Options': 'nosniff' },
  });
}
