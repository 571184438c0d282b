/**
 * "Add a comment" under an answer (docs/contracts.md §16): offered once the visitor liked or
 * disliked it; textbox "Comment", button "Send comment". The comment goes over the socket
 * (`comment` request); the transcript and the Customer API show it.
 */
import type { Ack } from '../chat/protocol';
import { el } from './dom';

export const COMMENT_MAX_CHARS = 2000;

export type SendComment = (text: string) => Promise<Ack<{ comments: number }>>;

export const COMMENT_CSS = `
.comment { margin-top: 6px; }
.comment form { border: 0; padding: 0; background: none; display: flex; flex-direction: column; gap: 6px; align-items: stretch; }
.comment textarea { min-height: 56px; font-size: 13px; }
.comment .row { display: flex; gap: 6px; }
.comment button { border: 1px solid #c9cedc; background: #fff; border-radius: 8px; padding: 2px 8px; cursor: pointer; font-size: 12px; color: #1c2233; }
.comment button.primary { background: var(--p); border-color: var(--p); color: #fff; }
.comment .done { font-size: 12px; color: #2b6a3a; }
.comment .err { font-size: 12px; color: #c92a2a; }
`;

/** The comment control of one answer; hidden until `offer(true)` (after a Like or Dislike). */
export function commentControl(send: SendComment): { element: HTMLElement; offer: (on: boolean) => void } {
  const box = el('div', { class: 'comment', hidden: true });
  const add = el('button', { type: 'button' }, 'Add a comment');
  const status = el('div', { role: 'status' });
  const showButton = () => {
    box.replaceChildren(add, status);
  };
  add.addEventListener('click', () => {
    const input = el('textarea', { 'aria-label': 'Comment', rows: '2', maxlength: String(COMMENT_MAX_CHARS) });
    const error = el('div', { class: 'err', role: 'alert' });
    const submit = el('button', { type: 'submit', class: 'primary' }, 'Send comment');
    const cancel = el('button', { type: 'button' }, 'Cancel');
    const form = el('form', {}, input, el('div', { class: 'row' }, submit, cancel), error);
    cancel.addEventListener('click', () => {
      showButton();
      add.focus();
    });
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const text = input.value.trim();
      if (!text) {
        error.textContent = 'Write a comment first.';
        return;
      }
      submit.disabled = true;
      void send(text).then((ack) => {
        submit.disabled = false;
        if (!ack.ok) {
          error.textContent = ack.error.message;
          return;
        }
        status.className = 'done';
        status.textContent = 'Thank you for your comment.';
        showButton();
      });
    });
    status.textContent = '';
    box.replaceChildren(form, status);
    input.focus();
  });
  showButton();
  return {
    element: box,
    offer: (on) => {
      if (on) box.hidden = false;
    },
  };
}
