/**
 * The connection core shared by widget 2.0 and legacy 1.0: tokens (given, from the integrator's
 * token endpoint, or from the service in client-id mode, refreshed before expiry), the socket,
 * the state manager, and the conversation kept across page reloads.
 */
import { io, type Socket } from 'socket.io-client';
import type { Ack, AskAck, HistoryMessage, RefusalCode, ServerEvent, SessionInfo, UploadInfo } from '../chat/protocol';

/** Refusals worth a retry shortly (lib/chat/protocol.ts RefusalCode). */
const PASSING_REFUSALS: RefusalCode[] = ['unavailable', 'draining', 'too_many_connections'];

export type Status = 'idle' | 'connecting' | 'connected' | 'reconnecting' | 'disconnected' | 'unauthorized';
export type WidgetState = { connectionStatus: Status; visible: boolean; conversationId: string | null; version: string; error: string | null };

export class StateManager {
  private state: WidgetState;
  private listeners = new Set<(s: WidgetState) => void>();
  constructor(initial: WidgetState) {
    this.state = initial;
  }
  getState(): WidgetState {
    return { ...this.state };
  }
  subscribe(fn: (s: WidgetState) => void): () => void {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }
  set(patch: Partial<WidgetState>) {
    this.state = { ...this.state, ...patch };
    for (const fn of this.listeners) {
      try {
        fn(this.getState());
      } catch (e) {
        console.error(e);
      }
    }
  }
}

export type Config = {
  accessToken?: string;
  svcClientId?: string;
  tokenEndpoint?: string;
  botName?: string;
  defaultQuestions?: string[];
  headerIcon?: string;
  headerChatName?: string;
  enableFileUpload?: boolean;
  welcomeMessage?: string;
  placeholder?: string;
  primaryColor?: string;
  position?: 'left' | 'right';
  advancedWelcomeText?: { icon?: string; title?: string; description?: string };
  /** The words of the "Talk to a person" buttons (set as text). */
  handoffButtonText?: string;
  show?: () => void;
  hide?: () => void;
};

type Claims = { exp: number; cid: string; sub: string; vb?: boolean };

function newVisitorId(): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  let id = 'v_';
  for (const b of bytes) id += alphabet[b % 62];
  return id;
}
/** A token source's answer that will not change by retrying (refused, unknown client, bad config). */
class FatalTokenError extends Error {}
type Stored = { visitor_id?: string; conversation_id?: string; last_seq?: number };

function decode(token: string): Claims | null {
  try {
    const part = token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(decodeURIComponent(escape(atob(part)))) as Claims;
  } catch {
    return null;
  }
}

export type Handlers = {
  event: (e: ServerEvent) => void;
  session: (s: SessionInfo) => void;
  /** The conversation's messages after a reload, and who handles it now (servers before 2.1 do not say). */
  restored: (messages: HistoryMessage[], handledBy?: 'ai' | 'human') => void;
};

export class ChatClient {
  socket: Socket | null = null;
  token = '';
  claims: Claims | null = null;
  session: SessionInfo | null = null;
  conversationId: string | null = null;
  lastSeq = 0;
  visitorId = '';
  private refreshTimer?: ReturnType<typeof setTimeout>;
  private everConnected = false;
  private stopped = false;
  /** Live events that arrived ahead of a missing seq (another instance's event still on its way). */
  private pending = new Map<number, ServerEvent>();
  private gapTimer?: ReturnType<typeof setTimeout>;
  /** Set by `server:draining`: the next reconnect is a move to another instance, not an outage. */
  private movingUntil = 0;

  constructor(
    readonly origin: string,
    readonly config: Config,
    readonly version: string,
    readonly state: StateManager,
    private h: Handlers,
  ) {}

  private storageKey() {
    return `svcAI:${this.claims?.cid ?? 'anon'}`;
  }
  private load(): Stored {
    try {
      return JSON.parse(localStorage.getItem(this.storageKey()) ?? '{}') as Stored;
    } catch {
      return {};
    }
  }
  private save(patch: Stored) {
    try {
      localStorage.setItem(this.storageKey(), JSON.stringify({ ...this.load(), ...patch }));
    } catch {
      /* storage unavailable */
    }
  }

  private refusal(message: string) {
    this.stopped = true;
    clearTimeout(this.refreshTimer);
    this.socket?.close();
    console.error(`svc widget: the access token was refused: ${message}`);
    this.state.set({ connectionStatus: 'unauthorized', error: message });
  }

  /** A fresh token from the configured source; null when there is no way to get one. */
  private async fetchToken(first: boolean): Promise<string | null> {
    const c = this.config;
    if (first && c.accessToken) return c.accessToken;
    if (c.tokenEndpoint) {
      const r = await fetch(c.tokenEndpoint, { credentials: 'same-origin', headers: { accept: 'application/json' } });
      if (!r.ok) {
        const E = r.status >= 400 && r.status < 500 ? FatalTokenError : Error;
        throw new E(`token endpoint ${c.tokenEndpoint} answered HTTP ${r.status}`);
      }
      const body = (await r.json()) as { access_token?: string };
      if (!body.access_token) throw new Error(`token endpoint ${c.tokenEndpoint} returned no access_token`);
      return body.access_token;
    }
    if (c.svcClientId) {
      const visitor = this.loadVisitor(c.svcClientId);
      const r = await fetch(`${this.origin}/api/widget/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: c.svcClientId, ...(visitor ? { visitor_id: visitor } : {}) }),
      });
      const body = (await r.json().catch(() => ({}))) as { access_token?: string; detail?: string };
      if (!r.ok || !body.access_token) {
        const E = r.status >= 400 && r.status < 500 ? FatalTokenError : Error;
        throw new E(body.detail ?? `token request failed (HTTP ${r.status})`);
      }
      return body.access_token;
    }
    return null;
  }

  private loadVisitor(clientId: string): string | undefined {
    try {
      return (JSON.parse(localStorage.getItem(`svcAI:${clientId}`) ?? '{}') as Stored).visitor_id;
    } catch {
      return undefined;
    }
  }

  /**
   * Gets a token. On the first try any failure means no widget (spec 7: a failing token endpoint);
   * a renewal that fails for a passing reason (network, 5xx) is retried every 5 s instead.
   */
  private async obtainToken(first: boolean): Promise<boolean> {
    let token: string | null;
    try {
      token = await this.fetchToken(first);
    } catch (e) {
      if (first || e instanceof FatalTokenError) {
        this.refusal((e as Error).message);
        return false;
      }
      clearTimeout(this.refreshTimer);
      this.refreshTimer = setTimeout(() => {
        void this.obtainToken(false).then((ok) => ok && this.reconnectIfDown());
      }, 5000);
      return false;
    }
    if (!token) {
      this.refusal(
        first ? 'no accessToken, tokenEndpoint or svcClientId in window.svcAIConfig' : 'token expired and there is no tokenEndpoint or svcClientId to renew it',
      );
      return false;
    }
    const claims = decode(token);
    if (!claims?.exp || !claims.cid) {
      this.refusal('token invalid: not a widget access token');
      return false;
    }
    this.token = token;
    this.claims = claims;
    // The browser's own visitor id keeps this visitor's conversation across token renewals.
    if (!this.load().visitor_id) this.save({ visitor_id: newVisitorId() });
    this.visitorId = claims.vb ? claims.sub : this.load().visitor_id!;
    this.scheduleRefresh();
    return true;
  }

  private scheduleRefresh() {
    clearTimeout(this.refreshTimer);
    if (!this.claims || !(this.config.tokenEndpoint || this.config.svcClientId)) return;
    const lifetime = this.claims.exp * 1000 - Date.now();
    // Renew at 80% of the remaining lifetime (at most 5 minutes before expiry).
    const wait = Math.max(1000, Math.min(lifetime * 0.8, lifetime - 5 * 60_000 > 0 ? lifetime - 5 * 60_000 : lifetime * 0.8));
    this.refreshTimer = setTimeout(() => {
      void this.obtainToken(false);
    }, wait);
  }

  private reconnectIfDown() {
    if (this.socket && !this.socket.connected && !this.socket.active && !this.stopped) this.socket.connect();
  }

  async start() {
    if (this.socket || this.stopped) return;
    this.state.set({ connectionStatus: 'connecting' });
    if (!(await this.obtainToken(true))) return;
    const stored = this.load();
    this.conversationId = stored.conversation_id ?? null;
    this.lastSeq = stored.last_seq ?? 0;
    this.state.set({ conversationId: this.conversationId });
    const socket = io(`${this.origin}/widget`, {
      auth: (cb: (a: object) => void) => cb({ token: this.token, version: this.version, visitor: this.visitorId }),
      reconnectionDelayMax: 5000,
    });
    this.socket = socket;
    socket.on('connect', () => {
      void this.onConnect();
    });
    socket.on('connect_error', (err: Error & { data?: { code?: RefusalCode } }) => {
      if (socket.active) {
        this.showReconnecting();
        return;
      }
      // The refusal's code; a server older than the codes sends only the message (a rolling upgrade).
      const code = err.data?.code;
      // Passing refusals (database away, a draining server, too many connections): try again shortly.
      if (code ? PASSING_REFUSALS.includes(code) : /^(service unavailable|server draining|too many connections)/.test(err.message)) {
        this.showReconnecting();
        setTimeout(
          () => {
            if (!this.stopped && !socket.connected) socket.connect();
          },
          1000 + Math.random() * 2000,
        );
        return;
      }
      if ((code ? code === 'token_expired' : /expired/.test(err.message)) && (this.config.tokenEndpoint || this.config.svcClientId)) {
        void this.obtainToken(false).then((ok) => ok && socket.connect());
        return;
      }
      this.refusal(err.message);
    });
    socket.on('disconnect', (reason: string) => {
      if (this.stopped) return;
      if (reason === 'io server disconnect') {
        this.state.set({ connectionStatus: 'reconnecting' });
        void this.obtainToken(false).then((ok) => ok && socket.connect());
      } else if (socket.active) {
        this.showReconnecting();
      } else {
        this.state.set({ connectionStatus: 'disconnected' });
      }
    });
    socket.on('server:draining', () => {
      this.movingUntil = Date.now() + 15_000;
    });
    socket.on('session', (s: SessionInfo) => {
      this.session = s;
      this.h.session(s);
    });
    socket.on('event', (e: ServerEvent) => this.onEvent(e));
  }

  /** A move to another instance (drain) shows nothing to the visitor unless it takes long. */
  private showReconnecting() {
    if (Date.now() < this.movingUntil) return;
    this.state.set({ connectionStatus: this.everConnected ? 'reconnecting' : 'connecting' });
  }

  /**
   * Events are handled in seq order. Seqs are consecutive per conversation, but with several
   * instances one may arrive before an earlier one: it waits briefly, then a resume fills the gap.
   */
  private onEvent(e: ServerEvent) {
    if (e.conversation_id !== this.conversationId || e.seq <= this.lastSeq) return;
    if (e.seq !== this.lastSeq + 1) {
      this.pending.set(e.seq, e);
      if (this.pending.size > 500) this.acceptPending(Infinity);
      this.gapTimer ??= setTimeout(() => {
        this.gapTimer = undefined;
        if (this.pending.size > 0 && this.conversationId) void this.resume(this.conversationId);
      }, 500);
      return;
    }
    this.accept(e);
    this.acceptPending(this.lastSeq);
  }

  private accept(e: ServerEvent) {
    this.lastSeq = e.seq;
    this.save({ last_seq: e.seq });
    this.h.event(e);
  }

  /** Handles buffered events in order: all up to `through` (a resume delivered every one), then consecutive ones. */
  private acceptPending(through: number) {
    for (const seq of [...this.pending.keys()].sort((a, b) => a - b)) {
      const e = this.pending.get(seq)!;
      this.pending.delete(seq);
      if (seq <= this.lastSeq) continue;
      if (seq <= through || seq === this.lastSeq + 1) this.accept(e);
      else {
        this.pending.set(seq, e);
        break;
      }
    }
  }

  /** Every event after lastSeq, page by page (the server answers at most one page per request). */
  private async resume(conversationId: string) {
    for (let page = 0; page < 50 && conversationId === this.conversationId; page++) {
      const ack = await this.request<{ through_seq?: number; more?: boolean }>('conversation:resume', {
        conversation_id: conversationId,
        last_seq: this.lastSeq,
      });
      if (!ack.ok) return;
      this.acceptPending(ack.through_seq ?? this.lastSeq);
      if (!ack.more) return;
    }
  }

  private async onConnect() {
    const first = !this.everConnected;
    this.everConnected = true;
    this.state.set({ connectionStatus: 'connected', error: null });
    if (!this.conversationId) return;
    if (first) {
      const hist = await this.request<{ messages: HistoryMessage[]; last_seq: number; handled_by?: 'ai' | 'human' }>('history', {
        conversation_id: this.conversationId,
      });
      if (!hist.ok) {
        this.forgetConversation();
        return;
      }
      this.h.restored(hist.messages, hist.handled_by);
    }
    await this.resume(this.conversationId);
  }

  private forgetConversation() {
    this.conversationId = null;
    this.lastSeq = 0;
    this.pending.clear();
    this.save({ conversation_id: undefined, last_seq: 0 });
    this.state.set({ conversationId: null });
  }

  request<T extends object>(name: string, payload: object): Promise<Ack<T>> {
    return new Promise((resolve) => {
      if (!this.socket) return resolve({ ok: false, error: { code: 'not_connected', message: 'Not connected.' } });
      this.socket.timeout(30_000).emit(name, payload, (err: Error | null, ack: Ack<T>) => {
        resolve(err ? { ok: false, error: { code: 'timeout', message: 'The service did not answer; please try again.' } } : ack);
      });
    });
  }

  /** The visitor's asks, one after another (see ask). */
  private asking: Promise<unknown> = Promise.resolve();

  /**
   * Asks, and asks again with the same client_message_id (stored once) while the service is
   * passing through an outage or a restart: `unavailable`, no answer, or no connection — for up to
   * two minutes, so the visitor's question is not dropped.
   * One ask at a time, in the order the visitor asked: a question sent before the previous one was
   * acknowledged waits for that acknowledgement. Sent at once, the second question of a new chat
   * started a conversation of its own, and questions retried through an outage were stored in the
   * order their retries happened to land.
   */
  ask(text: string, clientMessageId: string, attachments: string[]) {
    const turn = this.asking.then(() => this.askNow(text, clientMessageId, attachments));
    this.asking = turn.catch(() => {});
    return turn;
  }

  private async askNow(text: string, clientMessageId: string, attachments: string[]) {
    const started = Date.now();
    let ack: Ack<AskAck>;
    for (let attempt = 0; ; attempt++) {
      ack = await this.request<AskAck>('ask', {
        ...(this.conversationId ? { conversation_id: this.conversationId } : {}),
        client_message_id: clientMessageId,
        text,
        ...(attachments.length ? { attachments } : {}),
      });
      if (ack.ok || !['unavailable', 'timeout', 'not_connected'].includes(ack.error.code) || Date.now() - started > 120_000 || this.stopped) break;
      await new Promise((r) => setTimeout(r, Math.min(8000, 500 * 2 ** attempt) * (0.75 + Math.random() / 2)));
    }
    if (ack.ok && ack.conversation_id !== this.conversationId) {
      this.conversationId = ack.conversation_id;
      this.lastSeq = 0;
      this.pending.clear();
      this.save({ conversation_id: ack.conversation_id, last_seq: 0 });
      this.state.set({ conversationId: ack.conversation_id });
      // Events of the new conversation that raced the acknowledgement are replayed.
      await this.resume(ack.conversation_id);
    }
    return ack;
  }

  feedback(responseId: string, value: 'like' | 'dislike') {
    return this.request<{ likes: number; dislikes: number; mine: 'like' | 'dislike' | null }>('feedback', { response_id: responseId, value });
  }

  upload(file: File, onProgress: (fraction: number) => void): Promise<UploadInfo> {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('POST', `${this.origin}/api/widget/uploads`);
      xhr.setRequestHeader('authorization', `Bearer ${this.token}`);
      xhr.setRequestHeader('x-svc-visitor', this.visitorId);
      xhr.upload.addEventListener('progress', (e) => {
        if (e.lengthComputable) onProgress(e.loaded / e.total);
      });
      xhr.addEventListener('load', () => {
        let body: { detail?: string } & Partial<UploadInfo> = {};
        try {
          body = JSON.parse(xhr.responseText);
        } catch {
          /* not JSON */
        }
        if (xhr.status === 201) resolve(body as UploadInfo);
        else reject(new Error(body.detail ?? `Upload failed (HTTP ${xhr.status}).`));
      });
      xhr.addEventListener('error', () => reject(new Error('Upload failed: the service could not be reached.')));
      const form = new FormData();
      form.append('file', file);
      xhr.send(form);
    });
  }
}

/** window.svcAIConfig, or (for pages with a strict CSP) a <script type="application/json" data-svc-ai-config>. */
export function readConfig(): Config {
  const w = window as unknown as { svcAIConfig?: Config };
  const el = document.querySelector('script[type="application/json"][data-svc-ai-config]');
  let fromJson: Config = {};
  if (el?.textContent) {
    try {
      fromJson = JSON.parse(el.textContent) as Config;
    } catch {
      console.error('svc widget: data-svc-ai-config is not valid JSON');
    }
  }
  const cfg = (w.svcAIConfig = Object.assign(w.svcAIConfig ?? {}, { ...fromJson, ...(w.svcAIConfig ?? {}) }));
  return cfg;
}

export function uid(): string {
  return (crypto.randomUUID?.() ?? `${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`).replace(/[^\w-]/g, '');
}
