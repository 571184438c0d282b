'use client';
import { useActionState, useEffect, useRef, useState } from 'react';
import { renderMarkdown } from '@/lib/widget/markdown';
import type { BotSettings } from '@/lib/bot/settings';
import { saveBotSettingsAction, tryBotQuestionAction } from './actions';
import { MAX_QUESTION_CHARS } from '@/lib/limits/text';

/** An answer's Markdown, built as DOM nodes (never innerHTML), as the widget renders it. */
export function AnswerMarkdown({ text }: { text: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.replaceChildren(renderMarkdown(text));
  }, [text]);
  return <div ref={ref} className="markdown" />;
}

export function BotSettingsForm({
  initial,
  defaultNoAnswer,
  defaultModel,
  engine,
}: {
  initial: BotSettings;
  defaultNoAnswer: string;
  defaultModel: string;
  engine: 'own model' | 'model' | 'built-in';
}) {
  const [state, action, pending] = useActionState(saveBotSettingsAction, null);
  return (
    <section className="panel" aria-labelledby="bot-heading">
      <h2 id="bot-heading" style={{ marginTop: 0 }}>
        Settings
      </h2>
      <form action={action}>
        <div className="field">
          <label htmlFor="bot-instructions">Instructions</label>
          <textarea
            id="bot-instructions"
            name="instructions"
            rows={4}
            maxLength={4000}
            defaultValue={initial.instructions}
            placeholder="For example: Answer in a friendly tone. Refer billing questions to billing@example.com."
            style={{ width: '100%' }}
          />
          <p className="muted" style={{ margin: '.25rem 0 0' }}>
            Added to the model&apos;s instructions{engine === 'built-in' ? ' (used once you connect a model below; the built-in engine quotes passages)' : ''}.
          </p>
        </div>
        <div className="field">
          <label htmlFor="bot-no-answer">&ldquo;No answer&rdquo; text</label>
          <textarea
            id="bot-no-answer"
            name="noAnswerText"
            rows={2}
            maxLength={1000}
            defaultValue={initial.noAnswerText}
            placeholder={defaultNoAnswer}
            style={{ width: '100%' }}
          />
          <p className="muted" style={{ margin: '.25rem 0 0' }}>
            What the bot says when nothing in the knowledge base is relevant enough. Empty: the text shown.
          </p>
        </div>
        <div className="field">
          <label htmlFor="bot-model">Model</label>
          <input id="bot-model" name="model" type="text" maxLength={100} defaultValue={initial.model} placeholder={defaultModel} />
          <p className="muted" style={{ margin: '.25rem 0 0' }}>
            {engine === 'built-in' ? `Used once you connect a model below. Empty: ${defaultModel}.` : `Empty: ${defaultModel}.`}
          </p>
        </div>
        <div className="field">
          <label>
            <input name="showSources" type="checkbox" defaultChecked={initial.showSources} /> Show sources to visitors
          </label>
        </div>
        <button className="btn" type="submit" disabled={pending}>
          {pending ? 'Saving…' : 'Save settings'}
        </button>
      </form>
      {state && !state.ok && (
        <p className="error" role="alert" style={{ marginTop: '1rem' }}>
          {state.error}
        </p>
      )}
      {state?.ok && (
        <p className="success" role="status" style={{ marginTop: '1rem' }}>
          Settings saved.
        </p>
      )}
    </section>
  );
}

export function TryQuestion() {
  const [state, action, pending] = useActionState(tryBotQuestionAction, null);
  // Controlled, so the question stays on screen beside its answer (a form action resets the form).
  const [question, setQuestion] = useState('');
  return (
    <section className="panel" aria-labelledby="try-heading">
      <h2 id="try-heading" style={{ marginTop: 0 }}>
        Try a question
      </h2>
      <form action={action} className="row">
        <div className="field">
          <label htmlFor="try-q">Question</label>
          <input
            id="try-q"
            name="question"
            type="text"
            value={question}
            onChange={(e) => setQuestion(e.target.value)}
            required
            maxLength={MAX_QUESTION_CHARS}
          />
        </div>
        <button className="btn" type="submit" disabled={pending}>
          {pending ? 'Asking…' : 'Ask'}
        </button>
      </form>
      {state && !state.ok && (
        <p className="error" role="alert" style={{ marginTop: '1rem' }}>
          {state.error}
        </p>
      )}
      {state?.ok && (
        <div style={{ marginTop: '1rem' }} aria-live="polite">
          <p data-testid="try-verdict">
            {state.declined ? (
              <span className="badge off">Declined: nothing relevant enough</span>
            ) : (
              <span className="badge">
                Answered from {state.considered.filter((c) => c.used).length} passage{state.considered.filter((c) => c.used).length === 1 ? '' : 's'}
              </span>
            )}
          </p>
          <div className="msg assistant" style={{ marginLeft: 0 }} data-testid="try-answer">
            <AnswerMarkdown text={state.answer} />
          </div>
          <h3 style={{ fontSize: '1rem' }}>Passages considered</h3>
          {state.considered.length === 0 ? (
            <p className="muted">No passage shares a word with the question.</p>
          ) : (
            <div className="table-scroll">
              <table className="simple">
                <thead>
                  <tr>
                    <th scope="col">Rank</th>
                    <th scope="col">Document</th>
                    <th scope="col">Passage</th>
                    <th scope="col">Relevance</th>
                    <th scope="col">Used</th>
                  </tr>
                </thead>
                <tbody>
                  {state.considered.map((c) => (
                    <tr key={c.rank}>
                      <td>{c.rank}</td>
                      <td>{c.title}</td>
                      <td className="muted">
                        {plain(c.passage).slice(0, 200)}
                        {plain(c.passage).length > 200 ? '…' : ''}
                      </td>
                      <td>{Math.round(c.relevance * 100)}%</td>
                      <td>{c.used ? 'yes' : 'no'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      )}
    </section>
  );
}

/** A passage as one line of plain text for the ranking table (headings and table bars dropped). */
function plain(passage: string): string {
  return passage
    .replace(/^#{1,6}\s+/gm, '')
    .replace(/^\|[-:| ]+\|$/gm, '')
    .replace(/\s+/g, ' ')
    .trim();
}
