/** @type {import('next').NextConfig} */
const nextConfig = {
  // Drivers with native/wasm parts stay outside the bundle; server.ts and route handlers share
  // one database handle through globalThis (see db/client.ts).
  serverExternalPackages: ['@electric-sql/pglite', 'postgres'],
  poweredByHeader: false,
  // The whole project (app, lib, tests) is type-checked by `npm run typecheck`, a step of `npm test`.
  typescript: { ignoreBuildErrors: true },
  // Knowledge-base documents are uploaded through a server action (20 MB limit in lib/knowledge).
  experimental: { serverActions: { bodySizeLimit: '21mb' } },
  async headers() {
    return [];
  },
};
export default nextConfig;
