/**
 * Experiment, not part of `npm run bench:api`: the same Customer API reads (API-key auth,
 * lib/responses service, JSON body) on a bare node:http server without Next.js, to show how
 * much of a request's time is the framework. Only GET /healthz, /customer-api/v2/response and
 * /customer-api/v2/response/{id}.
 * usage: DATABASE_URL=… tsx tests/bench/bare-server.ts PORT   (listens on 127.0.0.1)
 */
import http from 'node:http';

async function main() {
  const port = Number(process.argv[2] ?? 0);
  const { authenticateCustomerRequest } = await import('../../lib/auth/customer-api');
  const { listResponsesPage, getResponse } = await import('../../lib/responses/service');
  const { getDatabase } = await import('../../db/client');
  const { pingDatabase } = await import('../../db/queries/health');
  await getDatabase();
  const server = http.createServer((req, res) => {
    void (async () => {
      try {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        let body: unknown;
        if (url.pathname === '/healthz') {
          await pingDatabase((await getDatabase()).db);
          body = { status: 'ok' };
        } else {
          const headers = new Headers();
          if (req.headers.authorization) headers.set('authorization', req.headers.authorization);
          const p = await authenticateCustomerRequest(new Request(url, { headers }));
          const m = /^\/customer-api\/v2\/response(?:\/([^/]+))?$/.exec(url.pathname);
          if (!m) { res.writeHead(404).end(); return; }
          body = m[1] ? await getResponse(p.accountId, m[1], url.searchParams)
            : await listResponsesPage(p.accountId, url.searchParams, '/customer-api/v2/response');
        }
        const text = JSON.stringify(body);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
      } catch (e) {
        res.writeHead(500).end(String((e as Error).message));
      }
    })();
  });
  server.listen(port, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`));
  process.on('SIGTERM', () => { server.close(); process.exit(0); });
}

main().catch((e) => { process.stderr.write(`${(e as Error).stack}\n`); process.exit(1); });
