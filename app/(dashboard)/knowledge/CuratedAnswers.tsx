import Link from 'next/link';
import { getCuratedAnswers } from '@/lib/knowledge/curated';
import { CuratedEntry } from './CuratedForms';
import styles from './knowledge.module.css';

/** Section "Curated answers" of /knowledge: the answers added from the gaps, which the bot gives first. */
export async function CuratedAnswers({ accountId, editable }: { accountId: number; editable: boolean }) {
  const entries = await getCuratedAnswers(accountId);
  return (
    <section className="panel" aria-labelledby="curated-heading">
      <h2 id="curated-heading" style={{ marginTop: 0 }}>
        Curated answers
      </h2>
      <p className="muted" style={{ marginTop: 0 }}>
        The bot gives these answers first, for their questions and similar ones. Add them from the questions it could not answer:{' '}
        <Link href="/insights/gaps">Content gaps</Link>.
      </p>
      {entries.length === 0 ? (
        <p className="empty">No curated answers yet.</p>
      ) : (
        <ol className={styles.curated}>
          {entries.map((e) => (
            <li key={e.id}>
              <CuratedEntry entry={{ id: e.id, questions: e.questions, answer: e.answer }} editable={editable} />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
