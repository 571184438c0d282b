import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import next from 'next';
import { Server as SocketServer } from 'socket.io';
import { getEnv } from '../env';
import { provideSessionSecret, provideSessionUrl } from '../auth/session-secret';
import { prepareDatabase, shutdownDatabase } from '../startup';
import { attachWidgetNamespace } from '../chat/socket';
import { handleDirectApi } from './direct-api';
import { handleOpsRequest, trackRequest } from '../ops/http';
import { checkTrustProxy, stampClientAddress } from '../net/client-address';
import { recoverInterruptedAnswers } from '../chat/service';
import { flushSightings } from '../chat/sightings';
import { flushRefusals } from '../widget-clients/refusals';
import type { DemoAccount } from '../demo/seed';
import { closeDocumentPool } from '../documents/pool';
import { startUploadMaintenance } from '../uploads/maintenance';

export type RunningServer = {
  url: string; port: number; http: HttpServer; io: SocketServer; demo: DemoAccount | null;
  close: () => Promise<void>;
};

/**
 * The whole product on one port: Next (pages, route handlers, assets) and socket.io.
 * Next's handler is attached BEFORE socket.io so long-polling works (STACK-NOTES).
 */
export async function startServer(opts: { dev?: boolean; port?: number; host?: string } = {}): Promise<RunningServer> {
  const env = getEnv();
  checkTrustProxy();
  const port = opts.port ?? env.PORT;
  const host = opts.host ?? env.HOST;
  const { demo } = await prepareDatabase();
  await provideSessionSecret();
  const stopUploadMaintenance = await startUploadMaintenance();

  const http = createServer();
  const app = next({ dev: opts.dev ?? false, dir: process.cwd(), hostname: host, port, httpServer: http });
  const handle = app.getRequestHandler();
  await app.prepare();
  http.on('request', (req, res) => {
    // Route handlers see the client address and protocol only through these headers (TRUST_PROXY rules; a client cannot set them).
    stampClientAddress(req);
    trackRequest(req, res);
    if (handleOpsRequest(req, res) || handleDirectApi(req, res)) return;
    void handle(req, res);
  });
  const io = new SocketServer(http, { serveClient: false, maxHttpBufferSize: 64 * 1024, cors: { origin: true } });
  attachWidgetNamespace(io);
  const recovered = await recoverInterruptedAnswers();
  if (recovered > 0) console.log(`stored ${recovered} answer(s) interrupted by the last stop as failed`);

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => { http.off('error', reject); resolve(); });
  });
  const actual = (http.address() as AddressInfo).port;
  provideSessionUrl(actual);
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      io.close();
      http.closeAllConnections?.();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await app.close?.();
      stopUploadMaintenance();
      await closeDocumentPool();
      await flushSightings();
      await flushRefusals();
      await shutdownDatabase();
    })();
    return closing;
  };
  return { url: `http://${shown}:${actual}`, port: actual, http, io, demo, close };
}
