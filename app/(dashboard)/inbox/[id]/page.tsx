import { notFound } from 'next/navigation';
import { requirePageMember } from '@/lib/auth/session';
import { inboxConversationPage } from '@/lib/inbox/requests';
import { markdownToText } from '@/lib/markdown/markdown';
import { Conversation } from '../_components/Conversation';
import styles from '../inbox.module.css';

export const metadata = { title: 'Conversation · Inbox · svc' };

/** One conversation for a member: summary, transcript, reply box and the handoff actions, live. */
export default async function InboxConversationPage({ params }: { params: Promise<{ id: string }> }) {
  const member = await requirePageMember('records.read');
  const page = await inboxConversationPage(member, (await params).id);
  if (!page) notFound();
  const { conversation: c, summary } = page;
  const last = summary.answers.at(-1);
  return (
    <>
      <p>
        <a href="/inbox">← Inbox</a>
      </p>
      <h1>{c.title || '(untitled)'}</h1>
      <section className="panel" aria-label="Summary">
        <h2 className={styles.panelTitle}>Summary</h2>
        <dl className={styles.summary}>
          <dt>Asked</dt>
          <dd>{summary.asked.length > 0 ? summary.asked.map((q) => <p key={q}>{q}</p>) : '—'}</dd>
          <dt>The AI</dt>
          <dd>
            {summary.answers.length === 0
              ? 'has not answered'
              : summary.declined > 0
                ? `declined ${summary.declined} of ${summary.answers.length} ${summary.answers.length === 1 ? 'answer' : 'answers'}`
                : `answered ${summary.answers.length === 1 ? 'the question' : `${summary.answers.length} questions`}`}
            {last && (
              <p className={styles.quote}>
                {last.declined && <span className="badge warn">Declined</span>} {markdownToText(last.answer)}
              </p>
            )}
          </dd>
          <dt>Sources</dt>
          <dd>{summary.sources.length > 0 ? summary.sources.map((s) => s.title).join(', ') : 'none'}</dd>
        </dl>
      </section>
      <Conversation key={c.id} page={page} me={{ userId: member.userId, email: member.email, name: member.name || member.email.split('@')[0]! }} />
    </>
  );
}
