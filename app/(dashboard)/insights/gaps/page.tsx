import { can } from '@/lib/auth/roles';
import { requirePageMember } from '@/lib/auth/session';
import { formatCount, getGapsPage } from '@/lib/dashboard/insights';
import { plural } from '@/lib/dashboard/format';
import { SynonymSuggestions } from '../../_components/SynonymSuggestions';
import { GapActions } from './GapActions';
import { WindowHead } from '../_components/WindowHead';

export const metadata = { title: 'Content gaps · svc' };

const REASON = { declined: ['declined', 'declined'], disliked: ['disliked answer', 'disliked answers'], handed_off: ['handoff', 'handoffs'] } as const;

export default async function GapsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { accountId, role } = await requirePageMember('records.read');
  // Agents read the gaps; answering and dismissing them changes the knowledge base.
  const editable = can(role, 'knowledge.write');
  const { query, range, error, groups, read, capped, total } = await getGapsPage(accountId, await searchParams);
  return (
    <>
      <p>
        <a href="/insights">← Insights</a>
      </p>
      <h1>Content gaps</h1>
      <WindowHead path="/insights/gaps" range={range} error={error}>
        Questions the bot declined, answers visitors disliked and conversations handed off to a person, from {query.from} to {query.to} (UTC), grouped by what
        was asked and ranked by conversations affected.
        {!editable && ' An owner or admin can add answers and synonyms for them.'}
      </WindowHead>
      {(capped || total > groups.length) && (
        <p className="muted" role="note">
          {capped ? `Showing the ${formatCount(read)} most recent failed questions of this range` : `${formatCount(read)} failed questions`}
          {total > groups.length ? `: the ${formatCount(groups.length)} groups with the most conversations of ${formatCount(total)}.` : '.'}
        </p>
      )}
      {groups.length === 0 ? (
        <p className="empty panel">Nothing to fill in this range: no declined, disliked or handed-off questions.</p>
      ) : (
        <ol className="gaps">
          {groups.map((g, i) => (
            <li key={`${i}-${g.question}`} className="panel">
              <h2>{g.question}</h2>
              <p className="muted">
                {plural(g.conversations, 'conversation', 'conversations')} ·{' '}
                {(Object.keys(REASON) as Array<keyof typeof REASON>)
                  .filter((k) => g.reasons[k] > 0)
                  .map((k) => `${g.reasons[k]} ${g.reasons[k] === 1 ? REASON[k][0] : REASON[k][1]}`)
                  .join(' · ')}
              </p>
              <ul aria-label="Questions">
                {g.questions.map((q) => (
                  <li key={q.text}>
                    {q.text}
                    {q.count > 1 && <span className="muted"> ×{q.count}</span>}
                  </li>
                ))}
              </ul>
              {g.draft && (
                <blockquote className="gaps-draft">
                  <span className="muted">A member replied:</span> {g.draft}
                </blockquote>
              )}
              {editable && (
                <>
                  <SynonymSuggestions
                    suggestions={g.synonyms}
                    label="Words of these questions that your knowledge base never uses, each with the word it uses instead:"
                  />
                  <GapActions questions={g.questions.map((q) => q.text)} draft={g.draft} />
                </>
              )}
            </li>
          ))}
        </ol>
      )}
    </>
  );
}
