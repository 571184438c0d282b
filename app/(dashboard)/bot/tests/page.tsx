import Link from 'next/link';
import { requirePageMember } from '@/lib/auth/session';
import { answerTestSources, listAnswerTests } from '@/lib/answer-tests/service';
import { ANSWER_TEST_LIMITS } from '@/lib/answer-tests/contract';
import stacked from '../../_components/stacked-table.module.css';
import { AddAnswerTest, ImportAnswerTests, RemoveAnswerTestButton, RunAnswerTests } from './AnswerTestForms';
import styles from './tests.module.css';

export const metadata = { title: 'Answer tests · svc' };

const TRIGGERS: Record<string, string> = {
  automatic: 'after a knowledge-base change',
  cli: 'from the CLI',
  demo: 'when the demo account was made',
  manual: 'by hand',
};
const when = (t: string | null) => (t ? `${t.slice(0, 16)} UTC` : '');

export default async function AnswerTestsPage() {
  const member = await requirePageMember('bot.manage');
  const [{ cases, state }, sources] = await Promise.all([listAnswerTests(member), answerTestSources(member)]);
  const newlyFailing = cases.filter((c) => c.newly_failing).length;
  return (
    <>
      <h1>Answer tests</h1>
      <p className="muted">
        Questions the bot must keep answering well. After any change to the <Link href="/knowledge">knowledge base</Link> they run again by themselves within a
        minute; a test that passed before and fails now is marked “Newly failing”. Settings of the bot: <Link href="/bot">Bot</Link>.
      </p>
      {newlyFailing > 0 && (
        <p className="notice" role="alert">
          Newly failing:{' '}
          {newlyFailing === 1 ? '1 test passed in the previous run and fails now.' : `${newlyFailing} tests passed in the previous run and fail now.`}
        </p>
      )}
      <AddAnswerTest sources={sources} full={cases.length >= ANSWER_TEST_LIMITS.cases} />
      <section className="panel" aria-labelledby="tests-heading">
        <h2 id="tests-heading" style={{ marginTop: 0 }}>
          Tests ({cases.length} of at most {ANSWER_TEST_LIMITS.cases})
        </h2>
        <div className={styles.toolbar}>
          <RunAnswerTests disabled={cases.length === 0} />
          {cases.length > 0 && (
            <a className="btn secondary" href="/bot/tests/export" download>
              Export CSV
            </a>
          )}
          <span className="muted" role="status">
            {state?.running
              ? 'A run is in progress…'
              : state?.due
                ? 'The knowledge base changed: the tests run again within a minute.'
                : state?.last_run_at
                  ? `Last run ${when(state.last_run_at)} (${TRIGGERS[state.last_trigger ?? ''] ?? 'by hand'}): ${state.last_passed_count} passed, ${state.last_failed_count} failed.`
                  : ''}
          </span>
        </div>
        {cases.length === 0 ? (
          <p className="empty">No tests yet: add one above, or import a CSV below.</p>
        ) : (
          <div className="table-scroll">
            <table className={`simple ${stacked.stack}`}>
              <thead>
                <tr>
                  <th scope="col">Question</th>
                  <th scope="col">Expect</th>
                  <th scope="col">Result</th>
                  <th scope="col">First source</th>
                  <th scope="col">Answer</th>
                  <th scope="col">
                    <span className="skip">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {cases.map((c) => (
                  <tr key={c.id} data-testid="answer-test">
                    <td data-label="Question">
                      <span className={styles.wrap}>{c.question}</span>
                    </td>
                    <td data-label="Expect">
                      <span className={styles.wrap}>
                        {c.expect}
                        {c.expect !== 'declines' && <> “{c.value}”</>}
                        {c.source_gone && <span className="badge warn"> source deleted</span>}
                      </span>
                    </td>
                    <td data-label="Result">
                      {c.passed === null ? (
                        <span className="badge off">not run yet</span>
                      ) : c.passed ? (
                        <span className="badge">passed</span>
                      ) : (
                        <span className={styles.badges}>
                          <span className="badge declined">failed</span>
                          {c.newly_failing && <span className="badge warn">Newly failing</span>}
                        </span>
                      )}
                    </td>
                    <td data-label="First source">
                      <span className={styles.wrap}>{c.passed === null ? '' : (c.first_source ?? 'none (declined)')}</span>
                    </td>
                    <td data-label="Answer">
                      <span className={`${styles.wrap} muted`}>{c.answer}</span>
                    </td>
                    <td data-label="">
                      <RemoveAnswerTestButton id={c.id} question={c.question} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <ImportAnswerTests />
    </>
  );
}
