/**
 * A real webhook receiver: node:http on 127.0.0.1 that records every request (headers, raw body,
 * arrival time) and answers as `respond` decides (status, delay, or never). Every wait is bounded.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Received = { headers: IncomingHttpHeaders; body: string; at: number; status: number | 'hang' };
export type Respond = (n: number, body: string) => { status: number; delayMs?: number } | 'hang';

export class WebhookReceiver {
  received: Received[] = [];
  port = 0;
  /** Requests being answered right now, and the most at once. */
  inFlight = 0;
  maxInFlight = 0;
  private server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      res.once('close', () => {
        this.inFlight--;
      });
      const how = this.respond(this.received.length, body);
      this.received.push({ headers: req.headers, body, at: Date.now(), status: how === 'hang' ? 'hang' : how.status });
      if (how === 'hang') return; // never answers: the sender's timeout must end it
      const reply = () => {
        res.writeHead(how.status, { 'content-type': 'text/plain' });
        res.end('ok');
      };
      if (how.delayMs) setTimeout(reply, how.delayMs);
      else reply();
    });
  });

  constructor(public respond: Respond = () => ({ status: 204 })) {}

  get url() {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Only the requests answered with a 2xx. */
  get delivered() {
    return this.received.filter((r) => typeof r.status === 'number' && r.status >= 200 && r.status < 300);
  }

  async start(port = 0) {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop() {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  /** Waits until `ok(received)` holds, else fails naming `what` and what arrived. */
  async until(ok: (r: Received[]) => boolean, what: string, timeoutMs = 10_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (ok(this.received)) return this.received;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(
      `receiver: ${what} not within ${timeoutMs} ms; got ${this.received.length}: ${this.received.map((r) => `${r.status} ${r.body.slice(0, 80)}`).join(' | ')}`,
    );
  }
}

export type WebhookBody = { type: string; timestamp: string; data: Record<string, any> };
export const bodyOf = (r: Received) => JSON.parse(r.body) as WebhookBody;
