/**
 * Widget 2.1: the visitor's side of human handoff (docs/contracts.md §14). "Talk to a person",
 * the waiting and away states, the member's name, typing and messages, hand-back, and the rating
 * after "Resolve". The widget (v2.ts) gives it the log and a request function; it owns the rest.
 */
import type { Ack, HandoffAck, HistoryMessage, ServerEvent } from '../chat/protocol';
import { el } from './dom';

export type HandoffHost = {
  log: HTMLElement;
  /** The polite live region the widget announces messages in. */
  live: HTMLElement;
  notice: HTMLElement;
  request<T extends object>(name: string, payload: object): Promise<Ack<T>>;
  conversationId(): string | null;
  /** Whether the widget already shows this visitor message (sent from this page). */
  showsVisitorMessage(clientMessageId: string | null): boolean;
  userBubble(text: string): void;
  /** The handoff button's words: the page's or the appearance's, else HANDOFF_TEXT. */
  buttonText(): string | undefined;
  /** The panel is open: a member message rendered now is seen. */
  panelOpen(): boolean;
  scrollToEnd(): void;
};

/** The button's name in docs/contracts.md §14, and its words unless the client set others. */
export const HANDOFF_TEXT = 'Talk to a person';

/**
 * Sets a handoff button's words. Custom words are shown, and the accessible name is the words
 * followed by "(talk to a person)": it starts with what is seen (voice control users say what
 * they see) and still says what the button does in the contract's words.
 */
export function labelHandoffButton(b: HTMLElement, words: string | undefined) {
  const text = words?.trim() || HANDOFF_TEXT;
  b.textContent = text;
  if (text.toLowerCase().includes(HANDOFF_TEXT.toLowerCase())) b.removeAttribute('aria-label');
  else b.setAttribute('aria-label', `${text} (${HANDOFF_TEXT.toLowerCase()})`);
}

/** The member typing indicator disappears after this long without a keystroke (§14). */
const TYPING_MS = 10_000;

export class Handoff {
  enabled = false;
  handledBy: 'ai' | 'human' = 'ai';
  private menuButton!: HTMLButtonElement;
  private menuList!: HTMLElement;
  private typing: HTMLElement | null = null;
  private typingTimer?: ReturnType<typeof setTimeout>;
  private unseen = new Set<string>();
  private shownMessages = new Set<string>();
  /** "Talk to a person" pressed before the conversation existed: asked right after the first message. */
  private wanted = false;

  constructor(private host: HandoffHost) {}

  /** The header's menu (shown once the session says the account enables handoff). */
  menu(): HTMLElement {
    this.menuList = el('div', { class: 'menu', id: 'svc-menu', hidden: true }, this.offerButton('menuitem'));
    this.menuButton = el(
      'button',
      { class: 'icon-btn', type: 'button', 'aria-label': 'Menu', 'aria-expanded': 'false', 'aria-controls': 'svc-menu', hidden: true },
      '⋯',
    );
    this.menuButton.addEventListener('click', () => this.toggleMenu());
    return el('div', { class: 'menu-wrap' }, this.menuButton, this.menuList);
  }

  private toggleMenu(open = this.menuList.hidden) {
    this.menuList.hidden = !open;
    this.menuButton.setAttribute('aria-expanded', String(open));
  }

  setEnabled(enabled: boolean) {
    this.enabled = enabled;
    this.menuButton.hidden = !enabled;
    if (!enabled) this.toggleMenu(false);
    for (const b of this.host.log.querySelectorAll<HTMLElement>('.handoff-offer')) b.hidden = !this.offerable();
  }

  /** The appearance arrived after the buttons were made: every one takes its words. */
  relabel() {
    for (const b of [...this.menuList.querySelectorAll<HTMLElement>('.menu-item'), ...this.host.log.querySelectorAll<HTMLElement>('.handoff-offer')])
      labelHandoffButton(b, this.host.buttonText());
  }

  private offerable() {
    return this.enabled && this.handledBy === 'ai';
  }

  /** "Talk to a person" under a declined answer or after a Dislike; shown while handoff is on and the AI answers. */
  offer(): HTMLElement {
    const b = this.offerButton('inline');
    b.hidden = !this.offerable();
    return b;
  }

  private offerButton(where: 'inline' | 'menuitem'): HTMLButtonElement {
    const b = el('button', { type: 'button', class: where === 'inline' ? 'handoff-offer' : 'menu-item' });
    labelHandoffButton(b, this.host.buttonText());
    b.addEventListener('click', () => {
      if (where === 'menuitem') this.toggleMenu(false);
      void this.request();
    });
    return b;
  }

  /** Asks for a person; without a conversation yet, the visitor's first message starts it. */
  async request() {
    const conversationId = this.host.conversationId();
    if (!conversationId) {
      this.wanted = true;
      this.system('Write your message and we will connect you to the team.');
      return;
    }
    const ack = await this.host.request<HandoffAck>('handoff:request', { conversation_id: conversationId });
    if (!ack.ok) {
      this.host.notice.textContent = ack.error.message;
      return;
    }
    this.setHandledBy(ack.handled_by);
  }

  /** After an acknowledged ask: a pending "Talk to a person" is sent now that the conversation exists. */
  afterAsk(ack: { handled_by?: 'ai' | 'human' }) {
    if (ack.handled_by) this.setHandledBy(ack.handled_by);
    if (this.wanted && this.handledBy === 'ai') {
      this.wanted = false;
      void this.request();
    }
  }

  setHandledBy(h: 'ai' | 'human') {
    this.handledBy = h;
    for (const b of this.host.log.querySelectorAll<HTMLElement>('.handoff-offer')) b.hidden = !this.offerable();
  }

  /** Handles a handoff event; false for the events the widget handles itself. */
  onEvent(e: ServerEvent): boolean {
    switch (e.type) {
      case 'status':
        this.setHandledBy(e.handled_by);
        return true;
      case 'handoff.waiting':
        this.setHandledBy('human');
        this.system(
          e.expected_wait_seconds === null ? 'Connecting you to the team' : `Connecting you to the team — expected wait ${formatWait(e.expected_wait_seconds)}`,
          true,
        );
        return true;
      case 'handoff.away':
        this.setHandledBy('human');
        this.away(e.until, e.text);
        return true;
      case 'agent.joined':
        this.setHandledBy('human');
        this.system(`${e.name} joined`, true);
        return true;
      case 'agent.typing':
        this.showTyping(e.name);
        return true;
      case 'agent.message':
        this.stopTyping();
        this.agentMessage(e.message_id, e.name, e.text);
        return true;
      case 'agent.left':
        this.stopTyping();
        this.setHandledBy('ai');
        this.system(`${e.name} left — the assistant is back`, true);
        return true;
      case 'visitor.message':
        if (!this.host.showsVisitorMessage(e.client_message_id)) this.host.userBubble(e.text);
        return true;
      case 'conversation.resolved':
        this.stopTyping();
        this.system('Conversation resolved', true);
        this.ratingForm();
        return true;
      default:
        return false;
    }
  }

  /** A history message written by a member or the system (the widget restores the AI's pairs). */
  restoreMessage(m: HistoryMessage) {
    if (m.author === 'agent') this.agentMessage(m.message_id, m.author_name ?? 'Team', m.content);
    else if (m.author === 'system') this.system(m.content);
  }

  private system(text: string, announce = false): HTMLElement {
    const line = el('p', { class: 'sys' }, text);
    this.host.log.append(line);
    if (announce) this.host.live.textContent = text;
    this.host.scrollToEnd();
    return line;
  }

  private agentMessage(messageId: string, name: string, text: string) {
    if (this.shownMessages.has(messageId)) return;
    this.shownMessages.add(messageId);
    const initial = name.trim().charAt(0).toUpperCase() || '?';
    this.host.log.append(
      el(
        'div',
        { class: 'msg agent' },
        el('div', { class: 'who' }, el('span', { class: 'avatar', 'aria-hidden': 'true' }, initial), el('span', {}, name)),
        el('div', { class: 'text' }, text),
      ),
    );
    this.host.live.textContent = `${name}: ${text.slice(0, 500)}`;
    this.host.scrollToEnd();
    this.unseen.add(messageId);
    this.reportSeen();
  }

  /** Tells the service which member messages the visitor saw (those are not mailed). */
  reportSeen() {
    const conversationId = this.host.conversationId();
    if (!conversationId || this.unseen.size === 0 || !this.host.panelOpen()) return;
    const ids = [...this.unseen].slice(0, 100);
    for (const id of ids) this.unseen.delete(id);
    void this.host.request('messages:seen', { conversation_id: conversationId, message_ids: ids }).then((ack) => {
      if (!ack.ok) for (const id of ids) this.unseen.add(id);
    });
  }

  private showTyping(name: string) {
    if (!this.typing) {
      this.typing = el('p', { class: 'typing sys' });
      this.host.log.append(this.typing);
      this.host.scrollToEnd();
    }
    this.typing.textContent = `${name} is typing…`;
    clearTimeout(this.typingTimer);
    this.typingTimer = setTimeout(() => this.stopTyping(), TYPING_MS);
  }

  private stopTyping() {
    clearTimeout(this.typingTimer);
    this.typing?.remove();
    this.typing = null;
  }

  /** Away: never a promise of a person; the Email box lets the reply reach the visitor. */
  private away(until: string | null, text: string) {
    const when = until ? new Date(until) : null;
    const head =
      when && !Number.isNaN(when.getTime())
        ? `We're away until ${when.toLocaleString([], { weekday: 'long', hour: 'numeric', minute: '2-digit' })}`
        : "We're away right now";
    const box = el('div', { class: 'card away' }, el('p', { class: 'card-title' }, head));
    if (text) box.append(el('p', {}, text));
    const email = el('input', { type: 'email', 'aria-label': 'Email', placeholder: 'you@example.com', autocomplete: 'email', required: true });
    const save = el('button', { type: 'submit', class: 'card-btn' }, 'Email me the reply');
    const status = el('p', { class: 'card-note', role: 'status' });
    const form = el('form', { class: 'card-form' }, email, save);
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void (async () => {
        const conversationId = this.host.conversationId();
        if (!conversationId) return;
        const ack = await this.host.request('visitor:email', { conversation_id: conversationId, email: email.value.trim() });
        status.textContent = ack.ok ? `We'll email the reply to ${email.value.trim()}.` : ack.error.message;
      })();
    });
    if (!text) box.append(el('p', { class: 'card-note' }, 'Leave your email and the team will reply there.'));
    box.append(form, status);
    this.host.log.append(box);
    this.host.live.textContent = head;
    this.host.scrollToEnd();
  }

  /**
   * After "Resolve": a rating is stored once. A click stores it at once when no comment is typed;
   * with a comment typed (the box comes first), the click chooses and "Send rating" stores both.
   */
  private ratingForm() {
    const conversationId = this.host.conversationId();
    if (!conversationId || this.host.log.querySelector('.rating')) return;
    let chosen = 0;
    const status = el('p', { class: 'card-note', role: 'status' });
    const comment = el('textarea', { 'aria-label': 'Rating comment', rows: '2', placeholder: 'Anything to add? (optional)', maxlength: '2000' });
    const submit = el('button', { type: 'submit', class: 'card-btn' }, 'Send rating');
    const form = el('form', { class: 'card-form column' });
    const send = async () => {
      const text = comment.value.trim();
      const ack = await this.host.request('rating', { conversation_id: conversationId, rating: chosen, ...(text ? { comment: text } : {}) });
      if (!ack.ok) {
        status.textContent = ack.error.message;
        return;
      }
      status.textContent = 'Thank you for your feedback.';
      comment.hidden = true;
      submit.hidden = true;
      for (const s of stars) s.disabled = true;
    };
    const stars = [1, 2, 3, 4, 5].map((n) => {
      const b = el('button', { type: 'button', class: 'star', 'aria-label': `Rate ${n} of 5`, 'aria-pressed': 'false' }, '★');
      b.addEventListener('click', () => {
        chosen = n;
        stars.forEach((s, i) => {
          s.setAttribute('aria-pressed', String(i + 1 === n));
          s.classList.toggle('on', i < n);
        });
        if (!comment.value.trim()) void send();
      });
      return b;
    });
    form.append(comment, el('div', { class: 'stars' }, ...stars), submit);
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (!chosen) {
        status.textContent = 'Choose a rating first.';
        return;
      }
      void send();
    });
    const card = el(
      'div',
      { class: 'card rating', role: 'group', 'aria-label': 'Rate this conversation' },
      el('p', { class: 'card-title' }, 'How did we do?'),
      form,
      status,
    );
    this.host.log.append(card);
    this.host.scrollToEnd();
  }
}

/** "about 3 minutes" from seconds (under a minute: "under a minute"). */
export function formatWait(seconds: number): string {
  if (seconds < 60) return 'under a minute';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `about ${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.round(minutes / 60);
  return `about ${hours} hour${hours === 1 ? '' : 's'}`;
}

/** The handoff UI's styles, appended to the widget's sheet. */
export const HANDOFF_CSS = `
.menu-wrap { position: relative; }
.menu { position: absolute; right: 0; top: 40px; background: #fff; color: #1c2233; border-radius: 10px; box-shadow: 0 8px 24px rgba(0,0,0,.2);
  padding: 6px; min-width: 190px; z-index: 2; }
.menu[hidden] { display: none; }
.menu-item { display: block; width: 100%; text-align: left; background: none; border: 0; padding: 9px 10px; border-radius: 8px; font-size: 14px; cursor: pointer; color: #1c2233; }
.menu-item:hover { background: #eef1f8; }
.handoff-offer { display: inline-block; margin-top: 8px; border: 1px solid var(--p); color: var(--p); background: #fff; border-radius: 999px; padding: 4px 12px; cursor: pointer; font-size: 13px; font-weight: 600; }
.handoff-offer[hidden] { display: none; }
.sys { align-self: center; margin: 2px 0; font-size: 12px; color: #4a5368; text-align: center; max-width: 92%; }
.msg.agent { align-self: flex-start; background: #e6f4ea; color: #10301c; border: 1px solid #b7dfc3; border-bottom-left-radius: 4px; white-space: pre-wrap; }
.msg.agent .who { display: flex; align-items: center; gap: 6px; font-size: 12px; font-weight: 700; color: #17602f; margin-bottom: 3px; white-space: normal; }
.msg.agent .avatar { width: 20px; height: 20px; border-radius: 50%; background: #17602f; color: #fff; display: grid; place-items: center; font-size: 11px; }
.card { align-self: stretch; border: 1px solid #d6dbe7; border-radius: 12px; padding: 10px 12px; font-size: 14px; background: #fafbfe; }
.card p { margin: 0 0 6px; }
.card-title { font-weight: 700; }
.card-note { font-size: 12px; color: #4a5368; }
.card-form { display: flex; gap: 6px; margin: 6px 0; border: 0; padding: 0; background: transparent; }
.card-form.column { flex-direction: column; align-items: stretch; }
.card-form input, .card-form textarea { flex: 1; min-width: 0; border: 1px solid #c9cedc; border-radius: 8px; padding: 7px 9px; font-size: 14px; color: #1c2233; background: #fff; resize: vertical; }
.card-btn { background: var(--p); color: #fff; border: 0; border-radius: 8px; padding: 7px 12px; cursor: pointer; font-weight: 600; font-size: 13px; }
.stars { display: flex; gap: 4px; }
.star:disabled { cursor: default; }
.card-form [hidden] { display: none; }
.card-form.column .card-btn { align-self: flex-start; }
.star { border: 1px solid #c9cedc; background: #fff; border-radius: 8px; width: 40px; height: 40px; font-size: 20px; cursor: pointer; color: #5d6679; }
.star.on { color: #b35c00; border-color: #b35c00; background: #fff4e6; }
input:focus-visible { outline: 3px solid #91a7ff; outline-offset: 2px; }
`;
