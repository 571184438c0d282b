/**
 * Legacy widget 1.0 (/chat/v0/widget.js): the 1.0 look and parameters (accessToken, botName,
 * defaultQuestions, welcomeMessage, placeholder, primaryColor, position) against the same
 * service, so the spec's rollback path (9.3 step 5) works. No streaming display, no uploads.
 */
import type { ServerEvent } from '../chat/protocol';
import { ChatClient, readConfig, StateManager, uid, type Config } from './client';
import { el } from './dom';

const VERSION = '1.0.9';

function handoffNotice(e: ServerEvent): string | null {
  if (e.type === 'agent.message') return `${e.name}: ${e.text}`;
  if (e.type === 'agent.joined') return `${e.name} joined`;
  if (e.type === 'agent.left') return `${e.name} left — the assistant is back`;
  if (e.type === 'handoff.waiting') return 'Connecting you to the team';
  if (e.type === 'handoff.away') return e.text ? `We're away right now. ${e.text}` : "We're away right now";
  if (e.type === 'conversation.resolved') return 'Conversation resolved';
  return null;
}
const CSS = `
:host { all: initial; font: 14px/1.4 Arial, Helvetica, sans-serif; color: #222; --c: var(--svc-legacy-primary, #0a7cff); }
* { box-sizing: border-box; font-family: inherit; }
:host([hidden]) { display: none !important; }
.launcher { position: fixed; bottom: 16px; right: 16px; z-index: 2147483000; background: var(--c); color: #fff; border: 0; border-radius: 4px; padding: 12px 18px; font-weight: bold; cursor: pointer; }
:host([data-position=left]) .launcher, :host([data-position=left]) .box { right: auto; left: 16px; }
.box { position: fixed; bottom: 70px; right: 16px; z-index: 2147483001; width: 320px; max-width: calc(100vw - 32px); height: 440px; background: #fff; border: 1px solid #bbb; border-radius: 4px; display: flex; flex-direction: column; }
.box[hidden] { display: none; }
.top { background: var(--c); color: #fff; padding: 8px 10px; display: flex; justify-content: space-between; align-items: center; font-weight: bold; }
.top button { background: none; border: 0; color: #fff; font-size: 18px; cursor: pointer; }
.log { flex: 1; overflow-y: auto; padding: 8px; }
.m { margin: 6px 0; padding: 6px 8px; border-radius: 3px; white-space: pre-wrap; overflow-wrap: anywhere; }
.u { background: #e8f1ff; text-align: right; } .b { background: #f4f4f4; } .e { color: #b00; }
.q button { display: block; margin: 4px 0; background: #fff; border: 1px solid var(--c); color: var(--c); border-radius: 3px; padding: 4px 8px; cursor: pointer; }
.fb button { font-size: 11px; margin-right: 4px; border: 1px solid #bbb; background: #fff; cursor: pointer; }
.fb button[aria-pressed=true] { background: var(--c); color: #fff; }
form { display: flex; border-top: 1px solid #ddd; } textarea { flex: 1; border: 0; padding: 8px; resize: none; height: 44px; }
.send { background: var(--c); color: #fff; border: 0; padding: 0 14px; cursor: pointer; }
button:focus-visible, textarea:focus-visible { outline: 2px solid #f90; }
`;

function boot() {
  const w = window as unknown as { svcAI?: Record<string, unknown>; svcAIConfig?: Config };
  const ai = (w.svcAI = w.svcAI ?? {});
  if (ai.loader || ai.widget) {
    console.error(
      'svc widget: the 2.0 loader (/chatbot/loader.js) and the 1.0 widget (/chat/v0/widget.js) are both on this page; only one runs. Remove the 1.0 script tag.',
    );
    return;
  }
  if (ai.legacy) return;
  ai.legacy = true;
  const script = document.currentScript as HTMLScriptElement | null;
  const origin = script ? new URL(script.src).origin : location.origin;
  const cfg = readConfig();
  const state = new StateManager({ connectionStatus: 'idle', visible: true, conversationId: null, version: VERSION, error: null });
  ai.version = VERSION;
  ai.stateManager = { getState: () => state.getState(), subscribe: (fn: (s: unknown) => void) => state.subscribe(fn) };

  const host = document.createElement('div');
  host.setAttribute('data-svc-legacy', '1.0');
  if (cfg.position === 'left') host.setAttribute('data-position', 'left');
  if (cfg.primaryColor) host.style.setProperty('--svc-legacy-primary', cfg.primaryColor);
  const root = host.attachShadow({ mode: 'open' });
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(CSS);
  root.adoptedStyleSheets = [sheet];
  const name = cfg.botName ?? 'Chat';
  const launcher = el('button', { class: 'launcher', type: 'button', 'aria-label': 'Open chat', 'aria-expanded': 'false' }, name);
  const close = el('button', { type: 'button', 'aria-label': 'Close chat' }, '×');
  const log = el('div', { class: 'log', role: 'log', 'aria-label': 'Messages' });
  const input = el('textarea', { 'aria-label': 'Message', placeholder: cfg.placeholder ?? 'Ask a question' });
  const send = el('button', { class: 'send', type: 'submit' }, 'Send');
  const form = el('form', {}, input, send);
  const box = el('div', { class: 'box', role: 'dialog', 'aria-label': name, hidden: true }, el('div', { class: 'top' }, name, close), log, form);
  root.append(launcher, box);
  const welcome = el('div', { class: 'm b' }, cfg.welcomeMessage ?? `Hello! I am ${name}.`);
  const questions = el('div', { class: 'q' });
  for (const q of cfg.defaultQuestions ?? []) {
    const b = el('button', { type: 'button' }, q);
    b.addEventListener('click', () => {
      void ask(q);
    });
    questions.append(b);
  }
  log.append(welcome, questions);

  const pending = new Map<string, HTMLElement>();
  const client = new ChatClient(origin, { accessToken: cfg.accessToken, tokenEndpoint: cfg.tokenEndpoint }, VERSION, state, {
    session: () => {},
    restored: (messages) => {
      for (const m of messages) log.append(el('div', { class: `m ${m.role === 'user' ? 'u' : 'b'}` }, m.error ?? m.content));
    },
    event: (e: ServerEvent) => {
      // A member's message and the handoff notices, in plain text (lib/widget/handoff.ts is 2.1's full view).
      const notice = handoffNotice(e);
      if (notice) {
        log.append(el('div', { class: 'm b' }, notice));
        log.scrollTop = log.scrollHeight;
      }
      if (e.type === 'answer.done' || e.type === 'answer.error') {
        const target = pending.get(e.client_message_id) ?? el('div', {});
        pending.delete(e.client_message_id);
        target.className = e.type === 'answer.done' ? 'm b' : 'm b e';
        target.textContent = e.type === 'answer.done' ? e.answer : e.message;
        if (e.type === 'answer.done') target.append(feedback(e.response_id));
        if (!target.isConnected) log.append(target);
        log.scrollTop = log.scrollHeight;
      }
    },
  });
  function feedback(responseId: string) {
    const like = el('button', { type: 'button', 'aria-label': 'Like', 'aria-pressed': 'false' }, '+1');
    const dislike = el('button', { type: 'button', 'aria-label': 'Dislike', 'aria-pressed': 'false' }, '-1');
    const set = async (v: 'like' | 'dislike') => {
      const r = await client.feedback(responseId, v);
      if (r.ok) {
        like.setAttribute('aria-pressed', String(r.mine === 'like'));
        dislike.setAttribute('aria-pressed', String(r.mine === 'dislike'));
      }
    };
    like.addEventListener('click', () => {
      void set('like');
    });
    dislike.addEventListener('click', () => {
      void set('dislike');
    });
    return el('div', { class: 'fb' }, like, dislike);
  }
  async function ask(text: string) {
    const t = text.trim();
    if (!t) return;
    input.value = '';
    questions.remove();
    log.append(el('div', { class: 'm u' }, t));
    const cmid = uid();
    const answer = el('div', { class: 'm b' }, '…');
    pending.set(cmid, answer);
    log.append(answer);
    log.scrollTop = log.scrollHeight;
    const ack = await client.ask(t, cmid, []);
    if (!ack.ok) {
      answer.className = 'm b e';
      answer.textContent = ack.error.message;
    }
  }
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void ask(input.value);
  });
  launcher.addEventListener('click', () => {
    box.hidden = false;
    launcher.setAttribute('aria-expanded', 'true');
    input.focus();
  });
  close.addEventListener('click', () => {
    box.hidden = true;
    launcher.setAttribute('aria-expanded', 'false');
    launcher.focus();
  });
  box.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') close.click();
  });
  state.subscribe((s) => {
    if (s.connectionStatus === 'unauthorized') host.remove();
  });
  cfg.show = () => {
    host.hidden = false;
  };
  cfg.hide = () => {
    box.hidden = true;
    host.hidden = true;
  };
  const mount = () => {
    document.body.append(host);
    void client.start();
  };
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount, { once: true });
}

boot();
