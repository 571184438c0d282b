/**
 * Widget 2.0: a custom element with an OPEN shadow root, styled only inside it, configured by
 * window.svcAIConfig (seed 2.5 and every 1.0 parameter), themed by the --svc-custom-* properties.
 */
import type { HistoryMessage, ServerEvent, SessionInfo, Source, UploadInfo } from '../chat/protocol';
import { fetchAppearance, styleAppearance, withAppearance, type WidgetAppearance } from './appearance';
import { ChatClient, readConfig, StateManager, uid, type Config } from './client';
import { COMMENT_CSS, commentControl } from './comments';
import { clipIcon, el, isHttpUrl, svgIcon } from './dom';
import { HANDOFF_CSS, Handoff } from './handoff';
import { renderMarkdown } from './markdown';
import { WIDGET_CSS } from './styles';

const VERSION = __WIDGET_VERSION__;

type Bubble = { user?: HTMLElement; bot?: HTMLElement; text: string; final: boolean; responseId?: string };

class SvcChatWidget extends HTMLElement {
  private root!: ShadowRoot;
  private client!: ChatClient;
  private state!: StateManager;
  private cfg!: Config;
  private panel!: HTMLElement;
  private launcher!: HTMLButtonElement;
  private log!: HTMLElement;
  private input!: HTMLTextAreaElement;
  private send!: HTMLButtonElement;
  private live!: HTMLElement;
  private conn!: HTMLElement;
  private statusText!: HTMLElement;
  private chips!: HTMLElement;
  private notice!: HTMLElement;
  private intro!: HTMLElement;
  private bubbles = new Map<string, Bubble>(); // by client_message_id
  private byResponse = new Map<string, Bubble>();
  private pendingUploads: UploadInfo[] = [];
  private session: SessionInfo | null = null;
  private renderQueued = new Set<Bubble>();
  private origin = '';
  private handoff!: Handoff;

  setup(origin: string, cfg: Config, state: StateManager) {
    this.origin = origin;
    this.cfg = cfg;
    this.state = state;
    this.root = this.attachShadow({ mode: 'open' });
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(WIDGET_CSS + COMMENT_CSS + HANDOFF_CSS);
    this.root.adoptedStyleSheets = [sheet];
    if (cfg.position === 'left') this.setAttribute('data-position', 'left');
    if (cfg.primaryColor) this.style.setProperty('--svc-legacy-primary', cfg.primaryColor);
    const self = this;
    this.handoff = new Handoff({
      get log() {
        return self.log;
      },
      get live() {
        return self.live;
      },
      get notice() {
        return self.notice;
      },
      request: (name, payload) => this.client.request(name, payload),
      conversationId: () => this.client.conversationId,
      showsVisitorMessage: (cmid) => cmid !== null && this.bubbles.has(cmid),
      userBubble: (text) => this.userBubble(text, []),
      buttonText: () => this.cfg.handoffButtonText,
      panelOpen: () => !this.panel.hidden,
      scrollToEnd: () => this.scrollToEnd(),
    });
    this.build();
    this.client = new ChatClient(origin, cfg, VERSION, state, {
      event: (e) => this.onEvent(e),
      session: (s) => {
        this.session = s;
        this.handoff.setEnabled(s.handoff?.enabled === true);
      },
      restored: (m, handledBy) => {
        if (handledBy) this.handoff.setHandledBy(handledBy);
        this.restore(m);
      },
    });
    state.subscribe((s) => this.reflect(s));
  }

  private name() {
    return this.cfg.headerChatName || this.cfg.botName || 'Chat';
  }

  private build() {
    const cfg = this.cfg;
    this.launcher = el(
      'button',
      { class: 'launcher', type: 'button', 'aria-label': 'Open chat', 'aria-expanded': 'false', 'aria-haspopup': 'dialog' },
      svgIcon(),
    );
    this.launcher.addEventListener('click', () => this.open());
    this.statusText = el('span', { class: 'status' });
    const title = el('div', { class: 'title', id: 'svc-title' }, this.name(), this.statusText);
    const close = el('button', { class: 'icon-btn', type: 'button', 'aria-label': 'Close chat' }, '×');
    close.addEventListener('click', () => this.close());
    const header = el('header', {}, isHttpUrl(cfg.headerIcon) ? el('img', { src: cfg.headerIcon, alt: '' }) : null, title, this.handoff.menu(), close);
    this.conn = el('div', { class: 'conn', role: 'status', hidden: true });
    this.intro = this.buildIntro();
    this.log = el('div', { class: 'log', role: 'log', 'aria-label': 'Messages', 'aria-live': 'off' }, this.intro);
    this.live = el('div', { class: 'sr', 'aria-live': 'polite', 'aria-atomic': 'true' });
    this.input = el('textarea', { 'aria-label': 'Message', rows: '1', placeholder: cfg.placeholder ?? 'Type your question…', maxlength: '4000' });
    this.send = el('button', { class: 'send', type: 'submit' }, 'Send');
    this.chips = el('div', { class: 'chips', 'aria-live': 'polite' });
    this.notice = el('div', { class: 'notice', role: 'alert' });
    const form = el('form', {}, this.fileInput(), this.input, this.send);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.submit(this.input.value);
    });
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        void this.submit(this.input.value);
      }
    });
    this.input.addEventListener('input', () => {
      this.input.style.height = 'auto';
      this.input.style.height = `${Math.min(120, this.input.scrollHeight)}px`;
    });
    this.panel = el(
      'div',
      { class: 'panel', role: 'dialog', 'aria-modal': 'false', 'aria-labelledby': 'svc-title', hidden: true },
      header,
      this.conn,
      this.log,
      this.chips,
      this.notice,
      form,
      this.live,
    );
    this.panel.setAttribute('aria-label', this.name());
    this.panel.removeAttribute('aria-labelledby');
    this.panel.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') this.close();
    });
    this.root.append(this.launcher, this.panel);
    if (window.visualViewport) {
      const fit = () => this.style.setProperty('--svc-vh', `${window.visualViewport!.height}px`);
      window.visualViewport.addEventListener('resize', fit);
      fit();
    }
  }

  private buildIntro(): HTMLElement {
    const w = this.cfg.advancedWelcomeText;
    const box = el('div', { class: 'welcome' });
    if (w && (w.title || w.description || w.icon)) {
      if (w.icon)
        box.append(isHttpUrl(w.icon) ? el('img', { class: 'wicon', src: w.icon, alt: '' }) : el('div', { class: 'wicon', 'aria-hidden': 'true' }, w.icon));
      if (w.title) box.append(el('h2', {}, w.title));
      if (w.description) box.append(el('p', {}, w.description));
    } else {
      box.append(el('p', {}, this.cfg.welcomeMessage ?? `Hi! Ask ${this.cfg.botName ?? 'us'} anything.`));
    }
    const qs = (this.cfg.defaultQuestions ?? []).filter((q) => typeof q === 'string' && q.trim());
    if (qs.length) {
      const list = el('div', { class: 'suggestions' });
      for (const q of qs) {
        const b = el('button', { type: 'button' }, q);
        b.addEventListener('click', () => {
          void this.submit(q);
        });
        list.append(b);
      }
      box.append(list);
    }
    return box;
  }

  private fileInput(): HTMLElement | null {
    if (!this.cfg.enableFileUpload) return null;
    const input = el('input', { type: 'file', 'aria-label': 'Attach file' });
    input.addEventListener('change', () => {
      const f = input.files?.[0];
      input.value = '';
      if (f) void this.attach(f);
    });
    return el('label', { class: 'file' }, input, el('span', { 'aria-hidden': 'true' }, clipIcon()));
  }

  private async attach(file: File) {
    this.notice.textContent = '';
    const limits = this.session?.limits;
    if (limits && file.size > limits.upload_max_bytes) {
      this.notice.textContent = `${file.name} is too large (max ${Math.round(limits.upload_max_bytes / 1048576)} MB).`;
      return;
    }
    const chip = el('span', { class: 'chip' }, `${file.name} 0%`);
    this.chips.append(chip);
    try {
      const info = await this.client.upload(file, (p) => {
        chip.firstChild!.textContent = `${file.name} ${Math.round(p * 100)}%`;
      });
      this.pendingUploads.push(info);
      chip.textContent = info.filename;
      const remove = el('button', { type: 'button', 'aria-label': `Remove ${info.filename}` }, '×');
      remove.addEventListener('click', () => {
        this.pendingUploads = this.pendingUploads.filter((u) => u !== info);
        chip.remove();
      });
      chip.append(remove);
    } catch (e) {
      chip.remove();
      this.notice.textContent = (e as Error).message;
    }
  }

  show() {
    this.hidden = false;
    this.state.set({ visible: true });
  }
  hide() {
    this.close();
    this.hidden = true;
    this.state.set({ visible: false });
  }

  open() {
    this.panel.hidden = false;
    this.launcher.setAttribute('aria-expanded', 'true');
    this.launcher.hidden = window.matchMedia('(max-width: 480px)').matches;
    void this.client.start();
    this.input.focus();
    // A history restored while the panel was closed could not scroll: open at the newest message.
    this.scrollToEnd();
    this.handoff.reportSeen();
  }

  close() {
    if (this.panel.hidden) return;
    this.panel.hidden = true;
    this.launcher.hidden = false;
    this.launcher.setAttribute('aria-expanded', 'false');
    this.launcher.focus();
  }

  start() {
    const started = this.client.start();
    // The client id is known at once in client-id mode, else from the first token.
    const clientId = this.cfg.svcClientId ? Promise.resolve(this.cfg.svcClientId) : started.then(() => this.client.claims?.cid);
    void clientId
      .then((id) => fetchAppearance(this.origin, id))
      .then((a) => {
        if (a) this.applyAppearance(a);
      });
  }

  /** The client's appearance from /widget: the header, the welcome and the look are rebuilt with it. */
  private applyAppearance(a: WidgetAppearance) {
    this.cfg = withAppearance(this.cfg, a);
    styleAppearance(this, a);
    this.statusText.parentElement!.firstChild!.textContent = this.name();
    this.panel.setAttribute('aria-label', this.name());
    const header = this.panel.querySelector('header')!;
    if (isHttpUrl(this.cfg.headerIcon) && !header.querySelector('img')) header.prepend(el('img', { src: this.cfg.headerIcon, alt: '' }));
    const intro = this.buildIntro();
    intro.hidden = this.intro.hidden;
    this.intro.replaceWith(intro);
    this.intro = intro;
    this.handoff.relabel();
  }

  private reflect(s: ReturnType<StateManager['getState']>) {
    const labels: Record<string, string> = { connecting: 'Connecting…', reconnecting: 'Reconnecting…', disconnected: 'Offline' };
    this.statusText.textContent = s.connectionStatus === 'connected' ? '' : (labels[s.connectionStatus] ?? '');
    this.conn.hidden = !(s.connectionStatus === 'reconnecting' || s.connectionStatus === 'disconnected');
    this.conn.textContent = s.connectionStatus === 'reconnecting' ? 'Connection lost — reconnecting…' : 'You are offline.';
    if (s.connectionStatus === 'unauthorized') this.remove();
  }

  private async submit(raw: string) {
    const text = raw.trim();
    if (!text) return;
    const max = this.session?.limits.question_max_chars ?? 4000;
    if (text.length > max) {
      this.notice.textContent = `Questions may have at most ${max} characters.`;
      return;
    }
    this.notice.textContent = '';
    this.input.value = '';
    this.input.style.height = '';
    const cmid = uid();
    const uploads = this.pendingUploads;
    this.pendingUploads = [];
    this.chips.textContent = '';
    const b: Bubble = { text: '', final: false };
    b.user = this.userBubble(text, uploads);
    this.bubbles.set(cmid, b);
    this.intro.hidden = true;
    const ack = await this.client.ask(
      text,
      cmid,
      uploads.map((u) => u.upload_id),
    );
    if (!ack.ok) {
      this.botError(b, ack.error.message);
      return;
    }
    b.responseId = ack.response_id;
    this.byResponse.set(ack.response_id, b);
    this.handoff.afterAsk(ack);
  }

  private userBubble(text: string, uploads: Array<{ filename: string }>): HTMLElement {
    const m = el(
      'div',
      { class: 'msg user' },
      text,
      uploads.length ? el('div', { class: 'attach' }, `Attached: ${uploads.map((u) => u.filename).join(', ')}`) : null,
    );
    this.log.append(m);
    this.scrollToEnd();
    return m;
  }

  private bubbleFor(e: { client_message_id: string; response_id: string }): Bubble {
    let b = this.byResponse.get(e.response_id) ?? this.bubbles.get(e.client_message_id);
    if (!b) {
      b = { text: '', final: false };
      this.bubbles.set(e.client_message_id, b);
    }
    b.responseId = e.response_id;
    this.byResponse.set(e.response_id, b);
    return b;
  }

  private onEvent(e: ServerEvent) {
    this.intro.hidden = true;
    if (this.handoff.onEvent(e)) return;
    if (e.type === 'question') {
      const b = this.bubbleFor(e);
      if (!b.user) b.user = this.userBubble(e.text, e.attachments);
    } else if (e.type === 'answer.delta') {
      const b = this.bubbleFor(e);
      if (b.final) return;
      b.text += e.text;
      this.queueRender(b);
    } else if (e.type === 'answer.done') {
      const b = this.bubbleFor(e);
      if (!b.user) return;
      b.text = e.answer;
      b.final = true;
      this.renderBot(b, e.sources, undefined, e.declined);
      this.live.textContent = `${this.cfg.botName ?? 'Bot'}: ${e.answer.replace(/[*_>#`]/g, '').slice(0, 500)}`;
    } else if (e.type === 'answer.error') {
      this.botError(this.bubbleFor(e), e.message);
    }
  }

  private queueRender(b: Bubble) {
    if (this.renderQueued.has(b)) return;
    this.renderQueued.add(b);
    requestAnimationFrame(() => {
      this.renderQueued.delete(b);
      if (!b.final) this.renderBot(b, null);
    });
  }

  private renderBot(b: Bubble, sources: Source[] | null, feedback?: { mine: 'like' | 'dislike' | null }, declined?: boolean) {
    if (!b.bot) {
      b.bot = el('div', { class: 'msg bot' });
      b.user?.nextSibling ? this.log.insertBefore(b.bot, b.user.nextSibling) : this.log.append(b.bot);
    }
    b.bot.className = 'msg bot';
    b.bot.textContent = '';
    b.bot.append(renderMarkdown(b.text));
    if (!b.final) {
      this.scrollToEnd();
      return;
    }
    // Titles only (answers stored before titles existed have none: nothing is shown, never a file name).
    const titles = [...new Set((sources ?? []).map((s) => s.title).filter((t) => typeof t === 'string' && t))];
    if (titles.length) b.bot.append(el('div', { class: 'sources' }, `Sources: ${titles.join(', ')}`));
    if (b.responseId) b.bot.append(this.feedbackButtons(b.responseId, feedback?.mine ?? null));
    if (declined) b.bot.append(this.handoff.offer());
    this.scrollToEnd();
  }

  private feedbackButtons(responseId: string, mine: 'like' | 'dislike' | null): HTMLElement {
    const like = el('button', { type: 'button', 'aria-label': 'Like', 'aria-pressed': String(mine === 'like') }, 'Like');
    const dislike = el('button', { type: 'button', 'aria-label': 'Dislike', 'aria-pressed': String(mine === 'dislike') }, 'Dislike');
    const comment = commentControl((text) => this.client.request('comment', { response_id: responseId, text }));
    comment.offer(mine !== null);
    const set = async (value: 'like' | 'dislike') => {
      const r = await this.client.feedback(responseId, value);
      if (!r.ok) {
        this.notice.textContent = r.error.message;
        return;
      }
      like.setAttribute('aria-pressed', String(r.mine === 'like'));
      dislike.setAttribute('aria-pressed', String(r.mine === 'dislike'));
      comment.offer(r.mine !== null);
      const bubble = like.closest('.msg');
      if (r.mine === 'dislike' && bubble && !bubble.querySelector('.handoff-offer')) bubble.append(this.handoff.offer());
    };
    like.addEventListener('click', () => {
      void set('like');
    });
    dislike.addEventListener('click', () => {
      void set('dislike');
    });
    return el('div', {}, el('div', { class: 'feedback' }, like, dislike), comment.element);
  }

  private botError(b: Bubble, message: string) {
    b.final = true;
    if (!b.bot) {
      b.bot = el('div', {});
      this.log.append(b.bot);
    }
    b.bot.className = 'msg bot error';
    b.bot.textContent = message;
    this.scrollToEnd();
  }

  private restore(messages: HistoryMessage[]) {
    for (let i = 0; i < messages.length; i++) {
      const q = messages[i]!;
      const a = messages[i + 1];
      // A question and its AI answer share a response id; members' and the system's messages stand alone.
      if (q.author !== 'visitor' || a?.author !== 'ai' || a.response_id !== q.response_id) {
        if (q.author === 'visitor') this.userBubble(q.content, q.attachments ?? []);
        else this.handoff.restoreMessage(q);
        continue;
      }
      i++;
      if (this.byResponse.has(q.response_id)) continue;
      const b: Bubble = { text: a.content, final: true, responseId: q.response_id };
      b.user = this.userBubble(q.content, q.attachments ?? []);
      this.byResponse.set(q.response_id, b);
      if (a.error) this.botError(b, a.error);
      else this.renderBot(b, a.sources, { mine: a.mine }, a.declined);
    }
    if (messages.length) this.intro.hidden = true;
  }

  private scrollToEnd() {
    this.log.scrollTop = this.log.scrollHeight;
  }
}

function boot() {
  const w = window as unknown as { svcAI?: Record<string, unknown> & { q?: string[]; legacy?: boolean; widget?: unknown }; svcAIConfig?: Config };
  const ai = (w.svcAI = w.svcAI ?? {});
  if (ai.legacy) {
    console.error('svc widget: the 1.0 widget (/chat/v0/widget.js) and 2.0 are both on this page; only one runs. Remove the 1.0 script tag.');
    return;
  }
  if (ai.widget) return;
  const script = document.currentScript as HTMLScriptElement | null;
  const origin = script?.getAttribute('data-svc-origin') ?? (script ? new URL(script.src).origin : location.origin);
  const cfg = readConfig();
  const state = new StateManager({ connectionStatus: 'idle', visible: true, conversationId: null, version: VERSION, error: null });
  if (!customElements.get('svc-chat-widget')) customElements.define('svc-chat-widget', SvcChatWidget);
  const widget = document.createElement('svc-chat-widget') as SvcChatWidget;
  widget.setup(origin, cfg, state);
  ai.widget = widget;
  ai.version = VERSION;
  ai.stateManager = { getState: () => state.getState(), subscribe: (fn: (s: unknown) => void) => state.subscribe(fn) };
  const queued = ai.q ?? [];
  cfg.show = () => widget.show();
  cfg.hide = () => widget.hide();
  const mount = () => {
    document.body.append(widget);
    widget.start();
    for (const call of queued.splice(0)) (call === 'hide' ? cfg.hide! : cfg.show!)();
  };
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount, { once: true });
}

boot();
