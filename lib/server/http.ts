import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import next from 'next';
import { Server as SocketServer } from 'socket.io';
import { getEnv } from '../env';
import { provideSessionSecret, provideSessionUrl } from '../auth/session-secret';
import { prepareDatabase, shutdownDatabase } from '../startup';
import { attachWidgetNamespace } from '../chat/socket';
import { handleDirectApi } from './direct-api';
import { finishAnswers } from '../chat/service';
import { attachChatAdapter, closeChatAdapter } from '../chat/adapter';
import { isDraining, resetDrain, startDrain } from './drain';
import { flushSightings } from '../chat/sightings';
import type { DemoAccount } from '../demo/seed';

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
  const port = opts.port ?? env.PORT;
  const host = opts.host ?? env.HOST;
  resetDrain(); // a server started again in the same process (tests) is not draining
  const { demo } = await prepareDatabase();
  await provideSessionSecret();

  const http = createServer();
  const app = next({ dev: opts.dev ?? false, dir: process.cwd(), hostname: host, port, httpServer: http });
  const handle = app.getRequestHandler();
  await app.prepare();
  http.on('request', (req, res) => {
    // Route handlers see the peer address only through this header, which a client cannot set.
    req.headers['x-svc-peer-ip'] = req.socket.remoteAddress ?? 'unknown';
    if (handleDirectApi(req, res)) return;
    void handle(req, res);
  });
  const io = new SocketServer(http, {
    serveClient: false, maxHttpBufferSize: 64 * 1024, cors: { origin: true },
    // While draining, a handshake fails at the transport level, so every widget keeps retrying (elsewhere).
    allowRequest: (_req, cb) => cb(isDraining() ? 'server draining' : null, !isDraining()),
  });
  attachChatAdapter(io);
  attachWidgetNamespace(io);

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => { http.off('error', reject); resolve(); });
  });
  const actual = (http.address() as AddressInfo).port;
  provideSessionUrl(actual);
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;

  let closing: Promise<void> | undefined;
  /**
   * Graceful stop (SIGTERM, CONTRACTS §9): drain — no new connections or asks, widgets moved
   * elsewhere — then in-flight answers finish (up to SHUTDOWN_GRACE_SECONDS), then everything closes.
   */
  const close = () => {
    closing ??= (async () => {
      startDrain();
      const left = await finishAnswers(env.SHUTDOWN_GRACE_SECONDS * 1000);
      if (left > 0) console.log(`${left} answer(s) still running after the grace period: released to another instance`);
      io.close();
      http.closeAllConnections?.();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await app.close?.();
      await flushSightings();
      await closeChatAdapter();
      await shutdownDatabase();
    })();
    return closing;
  };
  return { url: `http://${shown}:${actual}`, port: actual, http, io, demo, close };
}
