'use client';
import { useRouter } from 'next/navigation';
import { useEffect, useRef, useState, useTransition } from 'react';
import type { inboxConversationPage } from '@/lib/inbox/requests';
import { act, request, useInboxSocket } from './useInboxSocket';
import { Attachments } from '../../_components/Attachments';
import { Markdown } from '../../_components/Markdown';
import { SuggestedReply } from './SuggestedReply';
import styles from '../inbox.module.css';

type Page = NonNullable<Awaited<ReturnType<typeof inboxConversationPage>>>;
type Message = {
  id: string;
  author: string;
  author_name: string | null;
  text: string;
  created_at: string;
  declined?: boolean;
  client_message_id?: string;
  mail?: MailState['state'];
  attachments?: Page['messages'][number]['attachments'];
};
type Typing = { conversation_id: string; name: string; until: string };
/** The mail carrying a member's reply in an email conversation. */
type MailState = { state: 'queued' | 'sent' | 'failed'; error: string | null };
const MAIL_RANK = { queued: 0, sent: 1, failed: 2 } as const;
const MAIL_LABEL = { queued: 'Queued', sent: 'Sent', failed: 'Failed' } as const;
const MAIL_TITLE = { queued: 'The email is waiting to be sent', sent: 'Emailed to the customer', failed: '' } as const;

/** States only move forward (queued → sent → failed: a delivery report can fail a sent mail), whatever order they arrive in. */
function withMail(all: Record<string, MailState>, id: string, next: MailState): Record<string, MailState> {
  const now = all[id];
  return now && MAIL_RANK[now.state] >= MAIL_RANK[next.state] ? all : { ...all, [id]: next };
}
/** A composed reply or note until its acknowledgement: resent with the same id, so it is stored once. */
type Outgoing = { client_message_id: string; note: boolean; text: string; step: number; done: Promise<boolean>; finish: (stored: boolean) => void };

/** Codes after which the same message is sent again (no answer, the server failed); any other is a refusal. */
const RESEND_CODES = new Set(['unavailable', 'internal']);
const RESEND_MAX_DELAY_MS = 10_000;
/** An action clicked while messages are sending waits this long at most for them (then goes anyway). */
const ACTION_WAITS_MS = 20_000;

/** An id for one composed message (getRandomValues also works on a dashboard served over plain http). */
function newClientMessageId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `m-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

const AUTHOR_LABEL: Record<string, string> = { visitor: 'Visitor', ai: 'AI' };
const SNOOZE_HOURS = [1, 4, 24] as const;
/** A keystroke tells the server at most this often (it throttles what reaches the visitor too). */
const TYPING_EVERY_MS = 2_000;

/** The transcript's messages; an AI answer carries its response's stored declined flag. */
function flat(messages: Page['messages']): Message[] {
  return messages.map((m) => ({
    id: m.message_id,
    author: m.author,
    author_name: m.author_name,
    text: m.content,
    created_at: m.created_at,
    declined: m.declined,
    attachments: m.attachments,
  }));
}

/** A re-read page holds the newest messages: those shown already (loaded earlier, or pushed) stay, each as the page has it now. */
function merged(shown: Message[], fresh: Message[]): Message[] {
  const now = new Map(fresh.map((m) => [m.id, m]));
  const known = new Set(shown.map((m) => m.id));
  return [...shown.map((m) => now.get(m.id) ?? m), ...fresh.filter((m) => !known.has(m.id))];
}

/** `/shortcut` at the start of the box becomes its canned reply's text. */
function expand(text: string, replies: Page['replies']): string {
  const m = /^\/(\S+)/.exec(text);
  const hit = m && replies.find((r) => r.shortcut.replace(/^\//, '') === m[1]);
  return hit ? hit.text + text.slice(m[0].length) : text;
}

export function Conversation({ page, me }: { page: Page; me: { userId: number; email: string; name: string } }) {
  const router = useRouter();
  const id = page.conversation.id;
  const [messages, setMessages] = useState<Message[]>(() => flat(page.messages));
  const [mails, setMails] = useState<Record<string, MailState>>({});
  /** Every mail state seen, and the reply whose mail the notice speaks of: the notice follows that mail, so it never says "Sent" of a mail that failed. */
  const knownMails = useRef<Record<string, MailState>>({});
  const noticeMail = useRef<{ step: number; messageId: string } | null>(null);
  const mailed = (messageId: string, next: MailState) => {
    knownMails.current = withMail(knownMails.current, messageId, next);
    setMails((all) => withMail(all, messageId, next));
    const n = noticeMail.current;
    if (n?.messageId === messageId && n.step === steps.current) setNotice(mailNotice(knownMails.current[messageId]!));
  };
  /** The cursor of the messages before the oldest shown (null: none); the page's, then each "Load earlier"'s. */
  const [earlier, setEarlier] = useState<string | null>(page.earlier);
  const [loadingEarlier, setLoadingEarlier] = useState(false);
  const [text, setText] = useState('');
  const [notice, setNotice] = useState<{ ok: boolean; text: string } | null>(null);
  const [typing, setTyping] = useState<Typing | null>(null);
  const [pending, start] = useTransition();
  const [outgoing, setOutgoing] = useState<Outgoing[]>([]);
  const lastTyping = useRef(0);
  const end = useRef<HTMLDivElement>(null);
  const mounted = useRef(true);
  /** The messages being sent, by client_message_id: one leaves at its ack, or at its push when the ack was lost. */
  const sending = useRef(new Map<string, Outgoing>());
  /** Counts the member's sends and actions: a late "Sent." never covers what a later action said. */
  const steps = useRef(0);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  useEffect(() => {
    setMessages((shown) => merged(shown, flat(page.messages)));
    for (const m of page.mails) mailed(m.message_id, { state: m.state, error: m.error });
    // A re-read transcript may already hold a message whose ack was lost: it leaves "Sending…".
    for (const cid of page.sent) {
      const o = sending.current.get(cid);
      if (o) sent(o);
    }
  }, [page]);
  // Braces: scrollIntoView returns a promise in recent Chromium, and an effect may return only a cleanup.
  useEffect(() => {
    end.current?.scrollIntoView({ block: 'nearest' });
  }, [messages.at(-1)?.id, outgoing.length]);
  useEffect(() => {
    if (!typing) return;
    const t = setTimeout(() => setTyping(null), Math.max(0, Date.parse(typing.until) - Date.now()));
    return () => clearTimeout(t);
  }, [typing]);

  const socket = useInboxSocket({
    'inbox:message': (p: { conversation_id: string; message: Message }) => {
      if (p.conversation_id !== id) return;
      setMessages((list) => (list.some((m) => m.id === p.message.id) ? list : [...list, p.message]));
      if (p.message.mail) mailed(p.message.id, { state: p.message.mail, error: null });
      const mine = p.message.client_message_id && sending.current.get(p.message.client_message_id);
      if (mine) sent(mine, p.message);
      setTyping(null);
    },
    'inbox:changed': (p: { conversation_id: string }) => {
      if (p.conversation_id === id) router.refresh();
    },
    'inbox:mail': (p: { conversation_id: string; message_id: string } & MailState) => {
      if (p.conversation_id === id) mailed(p.message_id, { state: p.state, error: p.error });
    },
    'inbox:typing': (p: Typing) => {
      if (p.conversation_id === id && p.name !== me.name) setTyping(p); // the core names members as visitors see them
    },
  });

  /** One member action as a socket request; a refusal (the lost "Take over" race) says why. */
  const run = (name: string, payload: object, success: string, after?: () => void) =>
    start(async () => {
      steps.current++;
      // The reply before the Resolve; a refused one stops the action, and its notice stays.
      if (!(await messagesStored())) return;
      const r = await act(socket.current, name, { conversation_id: id, ...payload });
      if (r.ok) after?.();
      setNotice({ ok: r.ok, text: r.ok ? success : r.error.message });
    });

  /** "Load earlier": the page before the oldest shown, above it (the view stays where it is). */
  const loadEarlier = async () => {
    if (!earlier || loadingEarlier) return;
    setLoadingEarlier(true);
    const r = await act<{ messages: Page['messages']; earlier: string | null }>(socket.current, 'conversation:messages', {
      conversation_id: id,
      before: earlier,
    });
    setLoadingEarlier(false);
    if (!r.ok) {
      setNotice({ ok: false, text: r.error.message });
      return;
    }
    setMessages((shown) => {
      const known = new Set(shown.map((m) => m.id));
      return [...flat(r.messages).filter((m) => !known.has(m.id)), ...shown];
    });
    setEarlier(r.earlier);
  };

  const onType = (value: string) => {
    setText(value);
    const now = Date.now();
    if (value.trim() && !value.startsWith('/') && now - lastTyping.current > TYPING_EVERY_MS) {
      lastTyping.current = now;
      void request(socket.current, 'typing', { conversation_id: id });
    }
  };
  /** Whether the messages being sent are stored (true after ACTION_WAITS_MS or without a connection: the action says why itself). */
  const messagesStored = async () => {
    const waiting = [...sending.current.values()].map((o) => o.done);
    if (waiting.length === 0 || !socket.current?.connected) return true;
    const stored = await Promise.race([Promise.all(waiting), new Promise<null>((resolve) => setTimeout(() => resolve(null), ACTION_WAITS_MS))]);
    return stored === null || stored.every(Boolean);
  };
  const settle = (o: Outgoing, stored: boolean) => {
    o.finish(stored);
    sending.current.delete(o.client_message_id);
    setOutgoing((list) => list.filter((x) => x !== o));
  };
  /** A message being sent is stored: it leaves "Sending…" (the transcript has it from the ack or the push). */
  function sent(o: Outgoing, message?: Message) {
    if (!sending.current.has(o.client_message_id)) return;
    settle(o, true);
    if (o.step !== steps.current) return;
    const mail = message?.mail && (knownMails.current[message.id] ?? { state: message.mail, error: null });
    noticeMail.current = mail && message ? { step: o.step, messageId: message.id } : null;
    setNotice(mail ? mailNotice(mail) : { ok: true, text: o.note ? 'Note added.' : 'Sent.' });
  }
  /** Sends one composed message until it is stored; a refusal puts its text back in the box. */
  const deliver = async (o: Outgoing) => {
    const name = o.note ? 'conversation:note' : 'conversation:reply';
    sending.current.set(o.client_message_id, o);
    for (let attempt = 0; mounted.current && sending.current.has(o.client_message_id); attempt++) {
      const r = await act<{ message: Message }>(socket.current, name, { conversation_id: id, client_message_id: o.client_message_id, text: o.text });
      if (r.ok) {
        setMessages((list) => (list.some((m) => m.id === r.message.id) ? list : [...list, r.message]));
        if (r.message.mail) mailed(r.message.id, { state: r.message.mail, error: null });
        sent(o, r.message);
        return;
      }
      if (!RESEND_CODES.has(r.error.code)) {
        settle(o, false);
        setText((now) => (now.trim() ? now : o.text));
        setNotice({ ok: false, text: r.error.message });
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** attempt, RESEND_MAX_DELAY_MS)));
    }
  };
  const send = (note: boolean) => {
    const body = expand(text, page.replies).trim();
    if (!body) return;
    let finish: (stored: boolean) => void = () => {};
    const done = new Promise<boolean>((resolve) => {
      finish = resolve;
    });
    const o: Outgoing = { client_message_id: newClientMessageId(), note, text: body, step: ++steps.current, done, finish };
    setOutgoing((list) => [...list, o]);
    setText('');
    setNotice(null);
    void deliver(o);
  };
  const lastVisitorMessage = messages.findLast((m) => m.author === 'visitor')?.id ?? null;
  const matches = text.startsWith('/') ? page.replies.filter((r) => `/${r.shortcut.replace(/^\//, '')}`.startsWith(text.trim())).slice(0, 5) : [];
  const c = page.conversation as typeof page.conversation & { handled_by?: string; assignee?: string | null };
  // Take over is for someone else's (or nobody's) conversation; the assignee is shown by email.
  const handling = c.handled_by === 'human' && c.assignee === me.email && c.status !== 'Resolved';

  return (
    <>
      <p className="muted">
        <span className={c.status === 'Waiting' ? 'badge warn' : c.status === 'Open' ? 'badge' : 'badge off'}>{c.status}</span>{' '}
        {c.handled_by === 'human' ? `Handled by ${c.assignee ?? 'nobody yet'}` : 'Handled by the AI'}
      </p>
      <div className={styles.actions}>
        <button
          type="button"
          className="btn"
          disabled={pending || handling}
          title={handling ? 'You already handle this conversation' : undefined}
          onClick={() => run('conversation:take_over', {}, 'You have taken over.')}
        >
          Take over
        </button>
        {handling && <span className="muted">You handle this conversation.</span>}
        <form className={styles.inline} action={(f) => run('conversation:assign', { member_id: Number(f.get('assignee')) }, 'Assigned.')}>
          <label className={styles.srOnly} htmlFor="assignee">
            Assign to
          </label>
          <select id="assignee" name="assignee" defaultValue={String(me.userId)}>
            {page.members.map((m) => (
              <option key={m.user_id} value={m.user_id}>
                {m.name}
              </option>
            ))}
          </select>
          <button type="submit" className="btn secondary" disabled={pending}>
            Assign
          </button>
        </form>
        <button type="button" className="btn secondary" disabled={pending} onClick={() => run('conversation:hand_back', {}, 'The AI answers again.')}>
          Hand back to AI
        </button>
        <button type="button" className="btn secondary" disabled={pending} onClick={() => run('conversation:resolve', {}, 'Resolved.')}>
          Resolve
        </button>
        <form
          className={styles.inline}
          action={(f) => run('conversation:snooze', { until: new Date(Date.now() + Number(f.get('hours')) * 3600_000).toISOString() }, 'Snoozed.')}
        >
          <label className={styles.srOnly} htmlFor="snooze-hours">
            Snooze for
          </label>
          <select id="snooze-hours" name="hours" defaultValue="1">
            {SNOOZE_HOURS.map((h) => (
              <option key={h} value={h}>
                {h} h
              </option>
            ))}
          </select>
          <button type="submit" className="btn secondary" disabled={pending}>
            Snooze
          </button>
        </form>
      </div>
      <p role="status" className={notice ? (notice.ok ? 'success' : 'error') : undefined}>
        {notice?.text}
      </p>
      <section className="panel" aria-label="Transcript">
        {earlier && (
          <p className={styles.earlier}>
            <span className="muted">Earlier messages are not shown.</span>{' '}
            <button type="button" className="btn secondary" disabled={loadingEarlier} onClick={() => void loadEarlier()}>
              {loadingEarlier ? 'Loading…' : 'Load earlier'}
            </button>
          </p>
        )}
        {messages.length === 0 && <p className="empty">No messages yet.</p>}
        {messages.map((m) =>
          m.author === 'system' ? (
            <p key={m.id} className={`${styles.msg} ${styles.system}`}>
              {m.text}
              <time dateTime={m.created_at}>{m.created_at.slice(11, 16)} UTC</time>
            </p>
          ) : (
            <div key={m.id} className={`${styles.msg} ${styles[m.author] ?? ''}`}>
              <div className={styles.msgMeta}>
                <strong>{m.author === 'agent' || m.author === 'note' ? (m.author_name ?? 'Member') : AUTHOR_LABEL[m.author]}</strong>
                {m.author === 'note' && <span className="badge off">Internal note</span>}
                {m.author === 'ai' && m.declined && <span className="badge warn">Declined</span>}
                <time dateTime={m.created_at}>{m.created_at.slice(11, 16)} UTC</time>
                {m.author === 'agent' && mails[m.id] && <MailLabel mail={mails[m.id]!} />}
              </div>
              {/* The AI writes Markdown (the widget renders it); people's words are shown as typed. */}
              {m.author === 'ai' ? <Markdown className={styles.answer} text={m.text} /> : <p className={styles.text}>{m.text}</p>}
              {m.attachments && <Attachments files={m.attachments} />}
              {/* The reason in words, not only on hover: a phone has no hover. */}
              {m.author === 'agent' && mails[m.id]?.state === 'failed' && (
                <p className={styles.mailError}>Not delivered by email{mails[m.id]!.error ? `: ${mails[m.id]!.error}` : '.'}</p>
              )}
            </div>
          ),
        )}
        {outgoing.map((o) => (
          <div key={o.client_message_id} className={`${styles.msg} ${styles[o.note ? 'note' : 'agent']} ${styles.sending}`}>
            <div className={styles.msgMeta}>
              <strong>{me.name || me.email}</strong>
              <span>{o.note ? 'Sending note…' : 'Sending…'}</span>
            </div>
            <p className={styles.text}>{o.text}</p>
          </div>
        ))}
        <div ref={end} />
        <p className={styles.typing} aria-live="polite">
          {typing ? `${typing.name} is typing…` : ''}
        </p>
      </section>
      <SuggestedReply
        conversationId={id}
        lastVisitorMessage={lastVisitorMessage}
        onUse={(draft) => {
          setText(draft);
          document.getElementById('reply')?.focus();
        }}
      />
      <form
        className={`panel ${styles.composer}`}
        onSubmit={(e) => {
          e.preventDefault();
          send(false);
        }}
      >
        <label htmlFor="reply">Reply</label>
        <textarea
          id="reply"
          name="reply"
          rows={3}
          value={text}
          placeholder="Type a reply, or /shortcut for a canned reply"
          onChange={(e) => onType(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Tab' && matches.length > 0) {
              e.preventDefault();
              setText(matches[0]!.text);
            } else if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault();
              send(false);
            }
          }}
        />
        {matches.length > 0 && (
          <ul className={styles.matches} aria-label="Canned replies">
            {matches.map((r) => (
              <li key={r.id}>
                <button type="button" className={styles.match} onClick={() => setText(r.text)}>
                  <code>/{r.shortcut.replace(/^\//, '')}</code> {r.text}
                </button>
              </li>
            ))}
          </ul>
        )}
        <div className="row">
          <button type="submit" className="btn">
            Send
          </button>
          <button type="button" className="btn secondary" onClick={() => send(true)}>
            Internal note
          </button>
        </div>
      </form>
    </>
  );
}

/** The notice after a reply in an email conversation: saved, and where its email is. */
function mailNotice(m: MailState): { ok: boolean; text: string } {
  if (m.state === 'failed') return { ok: false, text: `Reply saved, but the email was not delivered${m.error ? `: ${m.error}` : '.'}` };
  return { ok: true, text: m.state === 'sent' ? 'Sent by email.' : 'Reply saved; sending the email…' };
}

/** The state of a reply's email: a small muted word; "Failed" in the warning style (its reason shown under the reply). */
function MailLabel({ mail }: { mail: MailState }) {
  if (mail.state === 'failed')
    return (
      <span className="badge warn" title={mail.error ? `Not delivered: ${mail.error}` : 'Not delivered'} data-mail-state="failed">
        {MAIL_LABEL.failed}
      </span>
    );
  return (
    <span className={styles.mailState} title={MAIL_TITLE[mail.state]} data-mail-state={mail.state}>
      {MAIL_LABEL[mail.state]}
    </span>
  );
}
