import { startAccountDeletionSweep, stopAccountDeletionSweep } from '../privacy/account-deletion';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import next from 'next';
import { Server as SocketServer } from 'socket.io';
import { getEnv } from '../env';
import { provideSessionSecret, provideSessionUrl } from '../auth/session-secret';
import { prepareDatabase, shutdownDatabase } from '../startup';
import { attachWidgetNamespace } from '../chat/socket';
import { attachInboxNamespace } from '../inbox/socket';
import { handleDirectApi } from '../customer-api/direct-door';
import { handleOpsRequest, trackRequest } from '../ops/http';
import { checkTrustProxy, stampClientAddress } from '../net/client-address';
import { mayCarryPageBody, refusePageBody } from './page-bodies';
import { finishAnswers } from '../answers/runner';
import { attachChatAdapter, closeChatAdapter } from '../chat/adapter';
import { isDraining, resetDrain, startDrain } from '../core/drain';
import { flushSightings } from '../chat/sightings';
import { flushRefusals } from '../widget-clients/refusals';
import { recordServerAddress, type DemoAccount } from '../demo/seed';
import { closeDocumentPool, startDocumentPool } from '../documents/pool';
import { startUploadMaintenance } from '../uploads/maintenance';
import { startWebhookWorker, stopWebhookWorker } from '../webhooks/worker';
import { startMailWorker, stopMailWorker } from '../mail/worker';
import { startHandoffNotifier, stopHandoffNotifier } from '../mail/handoff-notifier';
import { startInboundListener } from '../email/listener';
import { startInboundProcessor, stopInboundProcessor } from '../email/processor';
import { startEmailAnswers, stopEmailAnswers } from '../email/answers';
import { startSnoozeSweeper, stopSnoozeSweeper } from '../conversations/snooze-sweeper';
import { startAuditPruner, stopAuditPruner } from '../audit/pruner';
import { startInsightsRefresher, stopInsightsRefresher } from '../insights/refresher';
import { startAnswerTestsWorker, stopAnswerTestsWorker } from '../answer-tests/worker';
import { startRetentionJob, stopRetentionJob } from '../privacy/retention';

/** A socket.io handshake (a new session): its path, and no `sid` of an existing one. */
function isSocketHandshake(url: string | undefined): boolean {
  return (url ?? '').startsWith('/socket.io/') && !/[?&]sid=/.test(url ?? '');
}

/**
 * While draining, a NEW socket.io session is answered 503 (Retry-After) before engine.io sees it,
 * for long-polling and websocket upgrades alike: a load balancer that retries on 503 (nginx's
 * `proxy_next_upstream … http_503`) sends the widget to another instance at once, while this one
 * still answers /readyz 503 and finishes its answers. Existing sessions are closed by the drain.
 * Wraps the listeners engine.io installed, so it runs first.
 */
function refuseNewSocketsWhileDraining(http: HttpServer): void {
  const body = JSON.stringify({ code: 'draining', message: 'server draining: reconnect to another instance' });
  const requests = http.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  http.removeAllListeners('request');
  http.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (isDraining() && isSocketHandshake(req.url)) {
      res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1', Connection: 'close' }).end(body);
      return;
    }
    for (const l of requests) l.call(http, req, res);
  });
  const upgrades = http.listeners('upgrade') as Array<(req: IncomingMessage, socket: Duplex, head: Buffer) => void>;
  http.removeAllListeners('upgrade');
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (isDraining() && isSocketHandshake(req.url)) {
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    for (const l of upgrades) l.call(http, req, socket, head);
  });
}

export type RunningServer = {
  url: string;
  port: number;
  http: HttpServer;
  io: SocketServer;
  demo: DemoAccount | null;
  close: () => Promise<void>;
  /** The SMTP listener's port (INBOUND_SMTP_PORT may be 0: any); null without a listener. */
  inboundSmtpPort: number | null;
};

/**
 * The whole product on one port: Next (pages, route handlers, assets) and socket.io.
 * Next's handler is attached BEFORE socket.io so long-polling works (docs/stack-notes.md).
 */
export async function startServer(opts: { dev?: boolean; port?: number; host?: string } = {}): Promise<RunningServer> {
  const env = getEnv();
  checkTrustProxy();
  const port = opts.port ?? env.PORT;
  const host = opts.host ?? env.HOST;
  resetDrain(); // a server started again in the same process (tests) is not draining
  const { demo } = await prepareDatabase();
  await provideSessionSecret();
  const stopUploadMaintenance = await startUploadMaintenance();
  startDocumentPool();

  const http = createServer();
  // Idle connections outlive a proxy's (nginx, load balancers: 60 s), so none is reused just as this
  // server closes it (Node's 5 s made such reuse a reset under load); Keep-Alive tells clients so.
  http.keepAliveTimeout = 65_000;
  http.headersTimeout = 66_000;
  const app = next({ dev: opts.dev ?? false, dir: process.cwd(), hostname: host, port, httpServer: http });
  const handle = app.getRequestHandler();
  await app.prepare();
  http.on('request', (req, res) => {
    // Route handlers see the client address and protocol only through these headers (TRUST_PROXY rules; a client cannot set them).
    stampClientAddress(req);
    trackRequest(req, res);
    if (handleOpsRequest(req, res) || handleDirectApi(req, res)) return;
    if (!mayCarryPageBody(req)) {
      void handle(req, res);
      return;
    }
    void refusePageBody(req, res).then(
      (refused) => {
        if (!refused) void handle(req, res);
      },
      () => {
        res.statusCode = 500;
        res.end();
      },
    );
  });
  const io = new SocketServer(http, {
    serveClient: false,
    maxHttpBufferSize: 64 * 1024,
    cors: { origin: true },
  });
  attachChatAdapter(io);
  attachWidgetNamespace(io);
  attachInboxNamespace(io);
  refuseNewSocketsWhileDraining(http);

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  startWebhookWorker();
  startMailWorker();
  startHandoffNotifier();
  startSnoozeSweeper();
  startAuditPruner();
  startInsightsRefresher();
  startAccountDeletionSweep();
  startAnswerTestsWorker();
  startRetentionJob();
  // Inbound mail (docs/contracts.md §17): a listener and the processing of what it stored, when INBOUND_SMTP_PORT is set.
  const inbound = await startInboundListener();
  if (inbound) {
    startInboundProcessor();
    startEmailAnswers();
  }
  const actual = (http.address() as AddressInfo).port;
  provideSessionUrl(actual);
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  const url = `http://${shown}:${actual}`;
  // Only what `seed --demo` prints depends on it: a database blip here must not stop the server.
  await recordServerAddress(url).catch((e: Error) => console.warn(`could not record the server address: ${e.message}`));

  let closing: Promise<void> | undefined;
  /**
   * Graceful stop (SIGTERM, docs/contracts.md §9): drain — no new connections or asks, widgets moved
   * elsewhere — then in-flight answers finish (up to SHUTDOWN_GRACE_SECONDS), then everything closes.
   */
  const close = () => {
    closing ??= (async () => {
      startDrain();
      await inbound?.close();
      const left = await finishAnswers(env.SHUTDOWN_GRACE_SECONDS * 1000);
      if (left > 0) console.log(`${left} answer(s) still running after the grace period: released to another instance`);
      await stopWebhookWorker();
      await stopHandoffNotifier();
      await stopMailWorker();
      await stopSnoozeSweeper();
      await stopAuditPruner();
      await stopInsightsRefresher();
      await stopAccountDeletionSweep();
      await stopAnswerTestsWorker();
      await stopRetentionJob();
      await stopInboundProcessor();
      await stopEmailAnswers();
      io.close();
      http.closeAllConnections?.();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await app.close?.();
      stopUploadMaintenance();
      await closeDocumentPool();
      await flushSightings();
      await flushRefusals();
      await closeChatAdapter();
      await shutdownDatabase();
    })();
    return closing;
  };
  return { url, port: actual, http, io, demo, close, inboundSmtpPort: inbound?.port ?? null };
}
