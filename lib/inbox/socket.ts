import type { Namespace, Server, Socket } from 'socket.io';
import { sessionFromCookieHeader, type DashboardSession } from '../auth/session';
import { isOwnOrigin } from '../auth/origin';
import { SESSIONS_TOPIC } from '../auth/session-events';
import { can } from '../auth/roles';
import { onInvalidation } from '../cache/invalidation';
import { fromDatabaseError, isAppError } from '../core/errors';
import { isDraining, onDrain } from '../core/drain';
import { MEMBER_TOPIC } from '../team/service';
import { setInboxPublisher } from '../conversations/events';
import { inboxRoom, publishInboxChange } from './live';
import { INBOX_HANDLERS, refreshDashboard } from './requests';
import { INBOX_NAMESPACE, INBOX_REQUESTS, type InboxRefusal, type InboxRequest, type InboxRequestName } from './protocol';
import { InboxRequests } from './schemas';
import { describeIssues, issueParams } from '../zod-issues';

/** What an accepted member connection carries (socket.data): the session as last checked. */
export type InboxSocketData = { member: DashboardSession };

/** How often an open dashboard refreshes `dashboard_seen_at` (availability counts the last 10 minutes). */
const SEEN_EVERY_MS = 60_000;

function refusal(code: InboxRefusal['code'], message: string): Error {
  return Object.assign(new Error(message), { data: { code } });
}

/** The member behind a handshake or an event: a live session whose role may use the inbox, else null. */
async function memberOf(socket: Socket): Promise<DashboardSession | null> {
  const session = await sessionFromCookieHeader(socket.request.headers.cookie ?? null);
  if (!session || session.mustSetUpTwoFactor || !can(session.role, 'records.read')) return null;
  return session;
}

/** Re-reads the socket's session now; ends the socket when it no longer holds. */
function recheck(socket: Socket) {
  const data = socket.data as InboxSocketData;
  memberOf(socket).then(
    (member) => {
      if (!member || member.userId !== data.member?.userId || member.accountId !== data.member.accountId) revoke(socket, 'your dashboard session has ended');
      else data.member = member;
    },
    () => {}, // the database is away: the next event or minute re-checks
  );
}

function revoke(socket: Socket, message: string) {
  socket.emit('session:revoked', { code: 'session_ended', message } satisfies InboxRefusal);
  socket.disconnect(true);
}

function errorAck(name: string, e: unknown) {
  const known = isAppError(e) ? e : fromDatabaseError(e);
  if (known) return { ok: false, error: { code: known.code, message: known.message } };
  console.error(`inbox ${name} failed:`, e);
  return { ok: false, error: { code: 'internal', message: 'Something went wrong; please try again.' } };
}

/** One request: the session checked (socket.use), the payload parsed by its schema, the core's answer or its refusal as the acknowledgement. */
function handle<N extends InboxRequestName>(socket: Socket, name: N) {
  socket.on(name as string, async (payload: unknown, ack: unknown) => {
    const reply = typeof ack === 'function' ? (ack as (r: unknown) => void) : () => {};
    try {
      const parsed = InboxRequests[name].safeParse(payload);
      if (!parsed.success) {
        const message = describeIssues(issueParams(parsed.error, { path: 'full', fallback: name }));
        return reply({ ok: false, error: { code: 'invalid_request', message } });
      }
      reply({ ok: true, ...(await INBOX_HANDLERS[name]((socket.data as InboxSocketData).member, parsed.data as InboxRequest<N>)) });
    } catch (e) {
      reply(errorAck(name, e));
    }
  });
}

/**
 * The `/inbox` namespace for signed-in members (docs/decisions/inbox.md): the session cookie is
 * checked at the handshake and again before EVERY event (a removed member or an ended session is
 * cut off), one room per account carries the handoff core's changes to every instance.
 */
export function attachInboxNamespace(io: Server): Namespace {
  const nsp = io.of(INBOX_NAMESPACE);
  setInboxPublisher(publishInboxChange(nsp));

  nsp.use((socket, next) => {
    if (isDraining()) return next(refusal('draining', 'server draining: reconnect to another instance'));
    if (!isOwnOrigin(socket.handshake.headers.origin, socket.handshake.headers.host)) {
      return next(refusal('unauthenticated', 'this page may not open the inbox: open the dashboard itself'));
    }
    memberOf(socket).then(
      (member) => {
        if (!member) return next(refusal('unauthenticated', 'sign in to the dashboard first'));
        (socket.data as InboxSocketData).member = member;
        next();
      },
      (e) =>
        next(
          fromDatabaseError(e) ? refusal('unavailable', 'service unavailable: retry shortly') : refusal('unauthenticated', 'sign in to the dashboard first'),
        ),
    );
  });

  nsp.on('connection', (socket) => {
    const data = socket.data as InboxSocketData;
    void socket.join(inboxRoom(data.member.accountId));
    // Every event re-reads the session: the same member of the same account, still allowed.
    socket.use((packet, next) => {
      memberOf(socket).then(
        (member) => {
          if (!member || member.userId !== data.member.userId || member.accountId !== data.member.accountId) {
            revoke(socket, 'your dashboard session has ended');
            return;
          }
          data.member = member;
          next();
        },
        (e) => {
          // The session could not be read (the database is away): this request is refused, the socket stays.
          const ack = packet.at(-1);
          if (typeof ack === 'function') ack(errorAck(String(packet[0]), e));
        },
      );
    });
    for (const name of INBOX_REQUESTS) handle(socket, name);
    socket.onAny((name: unknown, ...args: unknown[]) => {
      const ack = args.at(-1);
      if (typeof ack === 'function' && !(INBOX_REQUESTS as readonly unknown[]).includes(name)) {
        ack({ ok: false, error: { code: 'invalid_request', message: `unknown request ${JSON.stringify(name)}: one of ${INBOX_REQUESTS.join(', ')}` } });
      }
    });

    // The refresh re-reads the session too: an ended one (signed out, password reset) stops counting as present within a minute.
    const seen = () =>
      void memberOf(socket)
        .then((member) => (member && member.userId === data.member.userId ? refreshDashboard(member) : revoke(socket, 'your dashboard session has ended')))
        .catch(() => {}); // the database is away: the next minute tries again
    void refreshDashboard(data.member).catch(() => {});
    const timer = setInterval(seen, SEEN_EVERY_MS);
    timer.unref();
    socket.on('disconnect', () => clearInterval(timer));
  });

  // A removed member's sockets close at once, on every instance (lib/team publishes the removal).
  onInvalidation(MEMBER_TOPIC, (userId) => {
    for (const s of nsp.sockets.values())
      if (String((s.data as InboxSocketData).member?.userId) === userId) revoke(s, 'you are no longer a member of this account');
  });
  // A sign-out, a new password or a two-factor requirement: the sockets concerned re-check at once, everywhere.
  onInvalidation(SESSIONS_TOPIC, (id) => {
    for (const s of nsp.sockets.values()) {
      const m = (s.data as InboxSocketData).member;
      if (m && (id === `user:${m.userId}` || id === `account:${m.accountId}`)) recheck(s);
    }
  });
  // Drain: members' pages are told, their transport closes, and socket.io-client reconnects elsewhere.
  onDrain(() => {
    for (const socket of nsp.sockets.values()) {
      socket.emit('server:draining', { code: 'draining', message: 'this server is restarting; reconnecting elsewhere' } satisfies InboxRefusal);
      socket.conn.close();
    }
  });
  return nsp;
}
