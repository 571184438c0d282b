import { notFound } from 'next/navigation';
import { requirePageMember } from '@/lib/auth/session';
import { getTranscript } from '@/lib/dashboard/service';
import { conversationMails } from '@/lib/email/originals';
import { fileSize, plural } from '@/lib/dashboard/format';
import { Attachments } from '../../_components/Attachments';
import { Markdown } from '../../_components/Markdown';

export const metadata = { title: 'Transcript · svc' };

/** Messages grouped by the response they belong to, in order: one article per question and its answer, or per other message. */
function byResponse<M extends { response_id: string | null; message_id: string }>(messages: M[]): Array<{ id: string; pair: M[] }> {
  const groups = new Map<string, M[]>();
  for (const m of messages) {
    const key = m.response_id ?? m.message_id;
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  return [...groups].map(([id, pair]) => ({ id, pair }));
}

type PageOf = NonNullable<Awaited<ReturnType<typeof getTranscript>>>['page'];

/** Older/newer links of a long transcript (nothing when it fits on one page). */
function Pager({ p }: { p: PageOf }) {
  if (p.pages === 1) return null;
  const link = (page: number, label: string, rel?: string) =>
    page >= 1 && page <= p.pages && page !== p.page ? (
      <a href={`?page=${page}`} rel={rel}>
        {label}
      </a>
    ) : (
      <span className="muted">{label}</span>
    );
  return (
    <nav className="pager" aria-label="Transcript pages">
      {link(1, '« Oldest')} {link(p.page - 1, '‹ Older', 'prev')}{' '}
      <span>
        Responses {p.first + 1}–{p.first + p.units} of {p.total} · page {p.page} of {p.pages}
      </span>{' '}
      {link(p.page + 1, 'Newer ›', 'next')} {link(p.pages, 'Newest »')}
    </nav>
  );
}

export default async function TranscriptPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<{ page?: string | string[]; response?: string | string[] }>;
}) {
  const { accountId } = await requirePageMember('records.read');
  const { id } = await params;
  const transcript = await getTranscript(accountId, id, await searchParams);
  if (!transcript) notFound();
  const { conversation: c, messages, page: pageOf } = transcript;
  const mails = await conversationMails(accountId, c.id);
  return (
    <>
      <p>
        <a href="/conversations">← Conversations</a>
      </p>
      <h1>{c.title || '(untitled)'}</h1>
      <p className="muted">
        <span className={c.status === 'Open' ? 'badge' : 'badge off'}>{c.status}</span> {c.channel_name} #{c.channel_id} ·{' '}
        {plural(c.response_count, 'response', 'responses')} · <span className="nowrap">started {c.created_at} UTC</span> ·{' '}
        <span className="nowrap">updated {c.updated_at} UTC</span>
      </p>
      <Pager p={pageOf} />
      <section className="panel" aria-label="Transcript">
        {messages.length === 0 && <p className="empty">This conversation has no questions yet.</p>}
        {byResponse(messages).map(({ id: responseId, pair }) => (
          <article key={responseId} id={`r-${responseId}`}>
            {pair.map((m) =>
              m.author === 'system' ? (
                <p className="muted" key={m.message_id}>
                  <em>{m.content}</em> <span>({m.created_at} UTC)</span>
                </p>
              ) : m.author === 'agent' || m.author === 'note' ? (
                <div className={m.author === 'note' ? 'msg note' : 'msg assistant'} key={m.message_id}>
                  <div className="meta">
                    <strong>{m.author === 'note' ? `Internal note · ${m.author_name ?? ''}` : (m.author_name ?? 'Member')}</strong>
                    <span>{m.created_at} UTC</span>
                  </div>
                  <Markdown className="content" text={m.content} />
                </div>
              ) : m.author === 'visitor' ? (
                <div className="msg user" key={m.message_id}>
                  <div className="meta">
                    <strong>Visitor</strong>
                    <span>{m.created_at} UTC</span>
                  </div>
                  <Markdown className="content" text={m.content} />
                  <Attachments files={m.attachments} />
                </div>
              ) : (
                <div className="msg assistant" key={m.message_id}>
                  <div className="meta">
                    <strong>Bot</strong>
                    {m.declined && <span className="badge declined">Declined</span>}
                    <span>{plural(m.likes, 'like', 'likes')}</span>
                    <span>{plural(m.dislikes, 'dislike', 'dislikes')}</span>
                    <span>{plural(m.comments, 'comment', 'comments')}</span>
                  </div>
                  {m.error ? <p className="error">Not answered: {m.error}</p> : <Markdown className="content" text={m.content} />}
                  {m.sources.length > 0 && (
                    <div className="sources">
                      Sources:{' '}
                      {m.sources
                        .map((s) => s.title ?? (s as { filename?: string }).filename)
                        .filter((v, i, a) => a.indexOf(v) === i)
                        .join(', ')}
                    </div>
                  )}
                  {m.commentTexts.length > 0 && (
                    <div className="sources">
                      <strong>Visitor comments</strong>
                      <ul aria-label="Comments">
                        {m.commentTexts.map((cm, i) => (
                          <li key={i}>
                            “{cm.body}” <span className="muted">({cm.created_at} UTC)</span>
                          </li>
                        ))}
                      </ul>
                    </div>
                  )}
                </div>
              ),
            )}
          </article>
        ))}
      </section>
      <Pager p={pageOf} />
      {mails.length > 0 && (
        <section className="panel" aria-labelledby="mails-heading">
          <h2 id="mails-heading" style={{ marginTop: 0 }}>
            Mail received
          </h2>
          <ul className="sources">
            {mails.map((m) => (
              <li key={m.id}>
                {m.received_at} UTC · {m.from_address ?? 'unknown sender'} · {m.subject || '(no subject)'} ({fileSize(m.size)}) ·{' '}
                <a href={`/conversations/${c.id}/original/${m.id}`} aria-label={`Show original of the mail of ${m.received_at}`}>
                  Show original
                </a>
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}
