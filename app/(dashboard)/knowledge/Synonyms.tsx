import { getGapSynonymSuggestions } from '@/lib/dashboard/insights';
import { getSynonymGroups } from '@/lib/knowledge/synonyms';
import { SynonymSuggestions } from '../_components/SynonymSuggestions';
import { AddSynonyms, RemoveSynonymsButton } from './SynonymForms';
import styles from './knowledge.module.css';

/** Section "Synonyms" of /knowledge: the account's groups of words that stand for each other in questions. */
export async function Synonyms({ accountId, editable }: { accountId: number; editable: boolean }) {
  const [groups, suggestions] = await Promise.all([getSynonymGroups(accountId), editable ? getGapSynonymSuggestions(accountId) : []]);
  return (
    <section className="panel" aria-labelledby="synonyms-heading">
      <h2 id="synonyms-heading" style={{ marginTop: 0 }}>
        Synonyms
      </h2>
      <p className="muted" style={{ marginTop: 0 }}>
        Words your visitors use for the same thing. A question using one word of a group is searched with all of them: with “postage, shipping”, “How much is
        postage?” finds your shipping prices.
      </p>
      {editable && <AddSynonyms />}
      <SynonymSuggestions
        suggestions={suggestions}
        label="Suggested from the content gaps of the last 30 days: words visitors used that your knowledge base never uses, each with the word it uses instead."
      />
      {groups.length === 0 ? (
        <p className="empty">No synonyms yet.</p>
      ) : (
        <ul className={styles.synonyms}>
          {groups.map((g) => (
            <li key={g.id}>
              <span className={styles.wrap}>{g.words.join(', ')}</span>
              {editable && <RemoveSynonymsButton id={g.id} words={g.words.join(', ')} />}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
