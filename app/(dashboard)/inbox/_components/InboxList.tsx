'use client';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { listInboxView } from '@/lib/inbox/requests';
import { type AccountInboxCounts, VIEW_LABELS } from '@/lib/inbox/protocol';
import { request, useInboxSocket } from './useInboxSocket';
import styles from '../inbox.module.css';

type List = Awaited<ReturnType<typeof listInboxView>>;

/** Row re-reads wait this long after a change, so a burst of changes costs one read (counts come with the change). */
const CALM_MS = 300;

function chime() {
  try {
    const ctx = new AudioContext();
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.frequency.value = 880;
    gain.gain.setValueAtTime(0.15, ctx.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + 0.35);
    osc.connect(gain).connect(ctx.destination);
    osc.start();
    osc.stop(ctx.currentTime + 0.35);
    osc.onended = () => void ctx.close();
  } catch {
    // no audio in this browser: the notification and the count still say it
  }
}

/** The chime and, when allowed, a notification with what the visitor asked (the title) when known. */
function announce(title: string | undefined) {
  chime();
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
  new Notification('A visitor is waiting', { body: title?.trim() || 'A conversation is waiting for a person.', tag: 'svc-inbox-waiting' });
}

function ago(iso: string | null) {
  if (!iso) return '';
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  return s < 60 ? `${s} s` : s < 3600 ? `${Math.floor(s / 60)} min` : `${Math.floor(s / 3600)} h`;
}

/** The views with their counts and the current view's rows, re-read when the account's inbox changes. */
export function InboxList({ initial, memberId }: { initial: List; memberId: number }) {
  const [list, setList] = useState(initial);
  const [permission, setPermission] = useState<string>('granted');
  const waitingIds = useRef(new Set(initial.view === 'waiting' ? initial.conversations.map((c) => c.id) : []));
  const waitingCount = useRef(initial.counts.waiting);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const announced = useRef(false);
  const shown = useRef(initial.conversations.length);
  shown.current = list.conversations.length;
  const [loading, setLoading] = useState(false);

  const reread = useCallback(
    async (s: Parameters<typeof request>[0]) => {
      // As many rows as are shown (Show more included), up to the core's 100.
      const limit = Math.min(100, Math.max(25, shown.current));
      const next = await request<List>(s, 'inbox:list', { view: list.view, limit });
      if (!next) return;
      const fresh = next.view === 'waiting' ? next.conversations.filter((c) => !waitingIds.current.has(c.id)) : [];
      if ((next.counts.waiting > waitingCount.current || fresh.length > 0) && !announced.current) announce(fresh[0]?.title);
      announced.current = false;
      waitingCount.current = next.counts.waiting;
      if (next.view === 'waiting') waitingIds.current = new Set(next.conversations.map((c) => c.id));
      setList(next);
    },
    [list.view],
  );

  const socket = useInboxSocket({
    'inbox:changed': (p: { counts?: AccountInboxCounts; conversation?: { title: string; status: string; previous_status: string } }) => {
      if (p.counts) {
        const { mine, ...shared } = p.counts;
        if (shared.waiting > waitingCount.current) {
          const c = p.conversation;
          announce(c?.status === 'Waiting' && c.previous_status !== 'Waiting' ? c.title : undefined);
          announced.current = true;
        }
        waitingCount.current = shared.waiting;
        setList((l) => ({ ...l, counts: { ...shared, mine: mine[String(memberId)] ?? 0 } }));
      }
      if (timer.current) return;
      timer.current = setTimeout(() => {
        timer.current = null;
        void reread(socket.current);
      }, CALM_MS);
    },
    // After a reconnect (a drain, a network blip) the view may have moved on.
    connect: () => void reread(socket.current),
  });
  useEffect(() => {
    setPermission(typeof Notification === 'undefined' ? 'unsupported' : Notification.permission);
  }, []);

  return (
    <>
      <nav className={styles.views} aria-label="Inbox views">
        {VIEW_LABELS.map(([v, label]) => (
          <a key={v} href={`/inbox?view=${v}`} aria-current={v === list.view ? 'page' : undefined}>
            {label} <span className={styles.count}>{list.counts[v]}</span>
          </a>
        ))}
      </nav>
      {permission === 'default' && (
        <p className="muted">
          <button type="button" className="btn secondary" onClick={() => void Notification.requestPermission().then(setPermission)}>
            Notify me of waiting visitors
          </button>
        </p>
      )}
      <section className={`panel ${styles.list}`} aria-label={`${VIEW_LABELS.find(([v]) => v === list.view)?.[1]} conversations`}>
        {list.conversations.length === 0 ? (
          <p className="empty">No conversations here.</p>
        ) : (
          <ul>
            {list.conversations.map((c) => (
              <li key={c.id} className={styles.item}>
                <a className={styles.title} href={`/inbox/${c.id}`}>
                  {c.title || '(untitled)'}
                </a>
                <span className={c.status === 'Waiting' ? 'badge warn' : c.status === 'Open' ? 'badge' : 'badge off'}>{c.status}</span>
                <span className={styles.meta}>
                  {c.email_from && (
                    <>
                      <span className="badge off">Email</span> {c.email_from} ·{' '}
                    </>
                  )}
                  {c.handled_by === 'human' ? c.assignee_name || c.assignee || 'Unassigned' : 'AI answers'}
                  {c.waiting_since && (
                    // The server's "5 s" is the browser's "6 s" a second later: the one text that may differ at hydration.
                    <time dateTime={c.waiting_since} suppressHydrationWarning>
                      {` · waiting ${ago(c.waiting_since)}`}
                    </time>
                  )}
                </span>
                {c.preview && <span className={styles.preview}>{c.preview}</span>}
              </li>
            ))}
          </ul>
        )}
      </section>
      {list.next_cursor && (
        <p>
          <button
            type="button"
            className="btn secondary"
            disabled={loading}
            onClick={async () => {
              setLoading(true);
              const more = await request<List>(socket.current, 'inbox:list', { view: list.view, cursor: list.next_cursor });
              setLoading(false);
              if (more)
                setList((l) => ({
                  ...more,
                  conversations: [...l.conversations, ...more.conversations.filter((c) => !l.conversations.some((x) => x.id === c.id))],
                }));
            }}
          >
            Show more
          </button>
        </p>
      )}
    </>
  );
}
