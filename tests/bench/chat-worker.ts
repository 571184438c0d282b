/**
 * Client side of `npm run bench:chat` (see chat-bench.ts): one child process holding a share of
 * the widget sockets. Driven over the IPC channel; every wait is bounded; exits on `close`, when
 * the parent goes away, or after its own deadline.
 *
 *   → { type: 'connect', url, tokens, count, concurrency, timeoutMs }  ← { type: 'connected', … }
 *   → { type: 'ask', rate, warmupS, durationS, questions, timeoutMs }  ← { type: 'asked', … }
 *   → { type: 'drop' }  (close every socket, stay)                    ← { type: 'dropped' }
 *   → { type: 'close' }                                                ← { type: 'closed' } and exit
 */
import { performance } from 'node:perf_hooks';
import { io, type Socket } from 'socket.io-client';

type Msg =
  | { type: 'connect'; url: string; tokens: string[]; count: number; concurrency: number; timeoutMs: number }
  | { type: 'ask'; rate: number; warmupS: number; durationS: number; questions: string[]; timeoutMs: number }
  | { type: 'drop' }
  | { type: 'close' };

type Conn = { socket: Socket; conversationId?: string; alive: boolean };

const conns: Conn[] = [];
let unexpectedDisconnects = 0;
const disconnectReasons: Record<string, number> = {};
const send = (m: object) => {
  if (process.connected) process.send!(m);
};
const count = (rec: Record<string, number>, key: string) => {
  rec[key] = (rec[key] ?? 0) + 1;
};

// Bounded life: a worker never outlives its parent or one hour.
const lifetime = setTimeout(() => {
  closeAll();
  process.exit(3);
}, 60 * 60_000);
lifetime.unref();
process.on('disconnect', () => {
  closeAll();
  process.exit(0);
});

function openOne(url: string, token: string, timeoutMs: number): Promise<{ ok: true; conn: Conn } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    const socket = io(`${url}/widget`, {
      transports: ['websocket'],
      auth: { token, version: 'bench-0' },
      extraHeaders: { origin: 'http://localhost' },
      forceNew: true,
      reconnection: false,
      timeout: timeoutMs,
    });
    let done = false;
    const finish = (r: { ok: true; conn: Conn } | { ok: false; error: string }) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (!r.ok) socket.close();
      resolve(r);
    };
    const timer = setTimeout(() => finish({ ok: false, error: 'timeout waiting for session' }), timeoutMs + 1000);
    const conn: Conn = { socket, alive: true };
    // Accepted = the server's `session` message arrived (it is sent right after the middleware passed).
    socket.once('session', () => finish({ ok: true, conn }));
    socket.once('connect_error', (e) => finish({ ok: false, error: `connect_error: ${e.message}` }));
    socket.on('disconnect', (reason) => {
      if (!conn.alive) return;
      conn.alive = false;
      if (reason !== 'io client disconnect') {
        unexpectedDisconnects++;
        count(disconnectReasons, reason);
      }
      finish({ ok: false, error: `disconnect before session: ${reason}` });
    });
  });
}

async function connectMany(m: Extract<Msg, { type: 'connect' }>) {
  const started = performance.now();
  const errors: Record<string, number> = {};
  let ok = 0;
  let next = 0;
  const lane = async () => {
    while (next < m.count) {
      const i = next++;
      const r = await openOne(m.url, m.tokens[i % m.tokens.length]!, m.timeoutMs);
      if (r.ok) {
        conns.push(r.conn);
        ok++;
      } else count(errors, r.error);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(m.concurrency, m.count)) }, lane));
  send({ type: 'connected', ok, failed: m.count - ok, errors, ms: performance.now() - started, holding: conns.filter((c) => c.alive).length });
}

type Pending = { sentAt: number; conn: Conn; measured: boolean; ackAt?: number; firstDeltaAt?: number; settled: boolean; timer: NodeJS.Timeout };

/** Open loop: ask i is due at start + i / rate, sent by socket i mod n, whatever the answers do. */
async function askLoop(m: Extract<Msg, { type: 'ask' }>) {
  const live = conns.filter((c) => c.alive);
  const ack: number[] = [],
    firstDelta: number[] = [],
    done: number[] = [];
  const firstDeltaSent: number[] = []; // when each firstDelta sample's ask was sent, ms after the schedule start
  const errors: Record<string, number> = {};
  let timeouts = 0,
    sent = 0,
    sentMeasured = 0,
    maxLag = 0,
    lagSum = 0,
    deltas = 0;
  const pending = new Map<string, Pending>();
  const runId = `${process.pid.toString(36)}${Date.now().toString(36)}`;

  const settle = (cmid: string, p: Pending, kind: 'done' | 'error' | 'timeout', detail?: string) => {
    if (p.settled) return;
    p.settled = true;
    clearTimeout(p.timer);
    pending.delete(cmid);
    if (!p.measured) return;
    if (kind === 'done') done.push(performance.now() - p.sentAt);
    else if (kind === 'timeout') timeouts++;
    else count(errors, detail ?? 'error');
  };

  for (const c of live) {
    c.socket.on('event', (e: { type: string; client_message_id?: string; message?: string }) => {
      const p = e.client_message_id ? pending.get(e.client_message_id) : undefined;
      if (!p) return;
      if (e.type === 'answer.delta') {
        deltas++;
        if (p.firstDeltaAt === undefined) {
          p.firstDeltaAt = performance.now();
          if (p.measured) {
            firstDelta.push(p.firstDeltaAt - p.sentAt);
            firstDeltaSent.push(p.sentAt - start);
          }
        }
      } else if (e.type === 'answer.done') {
        settle(e.client_message_id!, p, 'done');
      } else if (e.type === 'answer.error') {
        settle(e.client_message_id!, p, 'error', `answer.error: ${e.message}`);
      }
    });
  }

  const fire = (i: number, measured: boolean) => {
    const c = live[i % live.length]!;
    if (!c.alive) {
      if (measured) count(errors, 'socket disconnected');
      return;
    }
    const cmid = `b${runId}-${i}`;
    const text = m.questions[i % m.questions.length]!;
    const p: Pending = {
      sentAt: performance.now(),
      conn: c,
      measured,
      settled: false,
      timer: setTimeout(() => settle(cmid, p, 'timeout'), m.timeoutMs),
    };
    pending.set(cmid, p);
    sent++;
    if (measured) sentMeasured++;
    const payload: Record<string, string> = { client_message_id: cmid, text };
    if (c.conversationId) payload.conversation_id = c.conversationId;
    c.socket
      .timeout(m.timeoutMs)
      .emit('ask', payload, (err: Error | null, res?: { ok: boolean; conversation_id?: string; error?: { code: string; message: string } }) => {
        if (err) return settle(cmid, p, 'timeout');
        p.ackAt = performance.now();
        if (measured) ack.push(p.ackAt - p.sentAt);
        if (!res?.ok) return settle(cmid, p, 'error', `ask refused: ${res?.error?.code ?? '?'} ${res?.error?.message ?? ''}`.trim());
        c.conversationId ??= res.conversation_id;
      });
  };

  const total = Math.round((m.warmupS + m.durationS) * m.rate);
  const warm = Math.round(m.warmupS * m.rate);
  const start = performance.now() + 50;
  let i = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (i < total && start + (i * 1000) / m.rate <= now) {
        const lag = now - (start + (i * 1000) / m.rate);
        if (i >= warm) {
          maxLag = Math.max(maxLag, lag);
          lagSum += lag;
        }
        fire(i, i >= warm);
        i++;
      }
      if (i >= total) return resolve();
      setTimeout(tick, Math.max(0, start + (i * 1000) / m.rate - performance.now()));
    };
    tick();
  });
  const sendSeconds = (performance.now() - start) / 1000;
  // Drain: every pending ask settles by its own timeout at the latest.
  const drainUntil = performance.now() + m.timeoutMs + 2000;
  while (pending.size > 0 && performance.now() < drainUntil) await new Promise((r) => setTimeout(r, 50));
  for (const [cmid, p] of pending) settle(cmid, p, 'timeout');
  for (const c of live) c.socket.off('event');
  send({
    type: 'asked',
    sent,
    sentMeasured,
    sendSeconds,
    ack,
    firstDelta,
    firstDeltaSent,
    startWall: performance.timeOrigin + start,
    done,
    errors,
    timeouts,
    deltas,
    lagMaxMs: maxLag,
    lagMeanMs: lagSum / Math.max(1, sentMeasured),
    sockets: live.length,
  });
}

function closeAll() {
  for (const c of conns) {
    c.alive = false;
    c.socket.close();
  }
  conns.length = 0;
}

process.on('message', (m: Msg) => {
  if (m.type === 'connect') void connectMany(m);
  else if (m.type === 'ask') void askLoop(m);
  else if (m.type === 'drop') {
    closeAll();
    send({ type: 'dropped' });
  } else if (m.type === 'close') {
    const unexpected = unexpectedDisconnects;
    closeAll();
    send({ type: 'closed', unexpectedDisconnects: unexpected, disconnectReasons });
    setTimeout(() => process.exit(0), 200);
  }
});
send({ type: 'ready', pid: process.pid });
