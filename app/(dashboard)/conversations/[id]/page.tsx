import { notFound } from 'next/navigation';
import { attachmentUrl } from '@/lib/api/links';
import { requirePageMember } from '@/lib/auth/session';
import { getTranscript } from '@/lib/dashboard/service';
import { plural } from '@/lib/dashboard/format';
import { Markdown } from '../../_components/Markdown';

export const metadata = { title: 'Transcript · svc' };

function size(n: number) {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export default async function TranscriptPage({ params }: { params: Promise<{ id: string }> }) {
  const { accountId } = await requirePageMember('records.read');
  const { id } = await params;
  const transcript = await getTranscript(accountId, id);
  if (!transcript) notFound();
  const { conversation: c, entries } = transcript;
  return (
    <>
      <p><a href="/conversations">← Conversations</a></p>
      <h1>{c.title || '(untitled)'}</h1>
      <p className="muted">
        <span className={c.status === 'Open' ? 'badge' : 'badge off'}>{c.status}</span>{' '}
        {c.channel_name} #{c.channel_id} · {plural(c.response_count, 'response', 'responses')} · started {c.created_at} UTC · updated {c.updated_at} UTC
      </p>
      <section className="panel" aria-label="Transcript">
        {entries.length === 0 && <p className="empty">This conversation has no questions yet.</p>}
        {entries.map((e) => (
          <article key={e.id} id={`r-${e.id}`}>
            <div className="msg user">
              <div className="meta"><strong>Visitor</strong><span>{e.created_at} UTC</span></div>
              <Markdown className="content" text={e.question} />
              {e.attachments.length > 0 && (
                <ul className="sources" aria-label="Attachments">
                  {e.attachments.map((a) => (
                    <li key={a.id}><a href={attachmentUrl(a.id)} download>{a.filename}</a> ({a.content_type}, {size(a.size)})</li>
                  ))}
                </ul>
              )}
            </div>
            <div className="msg assistant">
              <div className="meta">
                <strong>Bot</strong>
                <span>{plural(e.likes, 'like', 'likes')}</span>
                <span>{plural(e.dislikes, 'dislike', 'dislikes')}</span>
                <span>{plural(e.comments, 'comment', 'comments')}</span>
              </div>
              {e.error ? <p className="error">Not answered: {e.error}</p> : <Markdown className="content" text={e.answer} />}
              {e.sources.length > 0 && (
                <div className="sources">Sources: {e.sources.map((s) => s.title ?? (s as { filename?: string }).filename).filter((v, i, a) => a.indexOf(v) === i).join(', ')}</div>
              )}
              {e.commentTexts.length > 0 && (
                <ul className="sources" aria-label="Comments">
                  {e.commentTexts.map((cm, i) => <li key={i}>“{cm.body}” <span className="muted">({cm.created_at} UTC)</span></li>)}
                </ul>
              )}
            </div>
          </article>
        ))}
      </section>
    </>
  );
}
