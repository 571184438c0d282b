'use client';
import { useActionState, useEffect, useState, useTransition, type FormEvent } from 'react';
import { ANSWER_TEST_EXPECTS, ANSWER_TEST_LIMITS } from '@/lib/answer-tests/contract';
import { MAX_QUESTION_CHARS } from '@/lib/limits/text';
import { FormError, FormResult } from '../../_components/FormResult';
import { RowAction } from '../../knowledge/KnowledgeForms';
import { addAnswerTestAction, importAnswerTestsAction, removeAnswerTestAction, runAnswerTestsAction } from './actions';
import styles from './tests.module.css';

type Source = { kind: 'document' | 'curated'; id: string; label: string };

export function AddAnswerTest({ sources, full }: { sources: Source[]; full: boolean }) {
  const [state, dispatch, pending] = useActionState(addAnswerTestAction, null);
  const [, start] = useTransition();
  const [question, setQuestion] = useState('');
  const [expect, setExpect] = useState<(typeof ANSWER_TEST_EXPECTS)[number]>('answers from');
  const [text, setText] = useState('');
  const submit = (e: FormEvent<HTMLFormElement>) => {
    // Sent by hand so a refused test stays in the form to correct; an added one clears the question.
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    start(() => dispatch(form));
  };
  useEffect(() => {
    if (state?.ok) {
      setQuestion('');
      setText('');
    }
  }, [state]);
  const documents = sources.filter((s) => s.kind === 'document');
  const curated = sources.filter((s) => s.kind === 'curated');
  return (
    <section className="panel" aria-labelledby="add-test-heading">
      <h2 id="add-test-heading" style={{ marginTop: 0 }}>
        Add a test
      </h2>
      <form onSubmit={submit} className="row">
        <div className="field">
          <label htmlFor="test-question">Question</label>
          <input
            id="test-question"
            name="question"
            type="text"
            required
            maxLength={Math.min(MAX_QUESTION_CHARS, ANSWER_TEST_LIMITS.questionChars)}
            value={question}
            onChange={(e) => setQuestion(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="test-expect">Expect</label>
          <select id="test-expect" name="expect" value={expect} onChange={(e) => setExpect(e.target.value as typeof expect)}>
            {ANSWER_TEST_EXPECTS.map((x) => (
              <option key={x} value={x}>
                {x}
              </option>
            ))}
          </select>
        </div>
        {expect === 'answers from' && (
          <div className="field">
            <label htmlFor="test-source">Source</label>
            <select id="test-source" name="source" required defaultValue="">
              <option value="" disabled>
                {sources.length === 0 ? 'The knowledge base is empty' : 'Choose…'}
              </option>
              {documents.length > 0 && (
                <optgroup label="Documents">
                  {documents.map((s) => (
                    <option key={s.id} value={`document:${s.id}`}>
                      {s.label}
                    </option>
                  ))}
                </optgroup>
              )}
              {curated.length > 0 && (
                <optgroup label="Curated answers">
                  {curated.map((s) => (
                    <option key={s.id} value={`curated:${s.id}`}>
                      {s.label}
                    </option>
                  ))}
                </optgroup>
              )}
            </select>
          </div>
        )}
        {expect === 'mentions' && (
          <div className="field">
            <label htmlFor="test-text">Text</label>
            <input
              id="test-text"
              name="text"
              type="text"
              required
              maxLength={ANSWER_TEST_LIMITS.mentionChars}
              value={text}
              onChange={(e) => setText(e.target.value)}
            />
          </div>
        )}
        <button className="btn" type="submit" disabled={pending || full}>
          {pending ? 'Adding…' : 'Add test'}
        </button>
      </form>
      <p className={`muted ${styles.hint}`}>
        “answers from”: the answer&apos;s first source is that document (any version of it) or curated answer. “declines”: the bot says it has no answer.
        “mentions”: the answer (not a decline) contains the text, whatever the case.
      </p>
      <FormResult state={state} saved={state?.ok ? `Added: ${state.added.question}` : null} style={{ marginTop: '1rem' }} />
    </section>
  );
}

export function RunAnswerTests({ disabled }: { disabled: boolean }) {
  const [pending, start] = useTransition();
  const [result, setResult] = useState<Awaited<ReturnType<typeof runAnswerTestsAction>>>(null);
  return (
    <>
      <button type="button" className="btn" disabled={pending || disabled} onClick={() => start(async () => setResult(await runAnswerTestsAction()))}>
        {pending ? 'Running…' : 'Run tests'}
      </button>
      {result && !result.ok && <FormError error={result.error} inline />}
      {result?.ok && !pending && (
        <span className="success" role="status">
          {result.passed} passed, {result.failed} failed
        </span>
      )}
    </>
  );
}

export function RemoveAnswerTestButton({ id, question }: { id: string; question: string }) {
  return <RowAction label="Remove" busy="Removing…" name={question} run={() => removeAnswerTestAction(id)} />;
}

export function ImportAnswerTests() {
  const [state, dispatch, pending] = useActionState(importAnswerTestsAction, null);
  const [, start] = useTransition();
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    start(() => dispatch(form));
  };
  return (
    <section className="panel" aria-labelledby="import-tests-heading">
      <h2 id="import-tests-heading" style={{ marginTop: 0 }}>
        Import CSV
      </h2>
      <form onSubmit={submit} className="row">
        <div className="field">
          <label htmlFor="tests-csv">CSV file</label>
          <input id="tests-csv" name="file" type="file" required accept=".csv,text/csv" />
        </div>
        <button className="btn secondary" type="submit" disabled={pending}>
          {pending ? 'Importing…' : 'Import CSV'}
        </button>
      </form>
      <p className={`muted ${styles.hint}`}>
        Columns <code>question,expect,value</code> with that header line; <code>value</code> is the source&apos;s title (or “Curated answer: ” and its first
        question) for answers from, the text for mentions, empty for declines. At most {ANSWER_TEST_LIMITS.cases} tests; any bad line refuses the whole file.
      </p>
      <FormResult state={state} saved={state?.ok ? `Imported ${state.imported} tests.` : null} style={{ marginTop: '1rem' }} />
    </section>
  );
}
