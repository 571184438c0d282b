import Link from 'next/link';
import { can } from '@/lib/auth/roles';
import { requirePageMember } from '@/lib/auth/session';
import { documentKind, fileSize, plural } from '@/lib/dashboard/format';
import { listKnowledgeWithVersions, readKnowledgeDocument } from '@/lib/knowledge/service';
import { listWebsites } from '@/lib/knowledge/sites';
import { newlyFailingAnswerTests } from '@/lib/answer-tests/service';
import { TryQuestion } from '../bot/BotForms';
import stacked from '../_components/stacked-table.module.css';
import { DeleteDocumentButton, ImportWebsite, RefreshWhileImporting, RemoveWebsiteButton, RestoreButton, ResyncButton, UploadDocument } from './KnowledgeForms';
import styles from './knowledge.module.css';
import { Synonyms } from './Synonyms';
import { CuratedAnswers } from './CuratedAnswers';

export const metadata = { title: 'Knowledge base · svc' };

const when = (d: Date | null) => (d ? new Date(d).toISOString().slice(0, 16).replace('T', ' ') : '—');

export default async function KnowledgePage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { accountId, role } = await requirePageMember('knowledge.read');
  const editable = can(role, 'knowledge.write');
  const selected = (await searchParams).document;
  const [all, sites, reading, failing] = await Promise.all([
    listKnowledgeWithVersions(accountId),
    listWebsites(accountId),
    typeof selected === 'string' ? readKnowledgeDocument(accountId, selected) : null,
    newlyFailingAnswerTests(accountId),
  ]);
  const docs = all.filter((d) => !d.siteId);
  const importing = sites.some((s) => s.status === 'queued' || s.status === 'crawling');
  return (
    <>
      <h1>Knowledge base</h1>
      <p className="muted">
        The bot answers from these documents and web pages, split into passages. Visitors see each document&apos;s title (its first heading). How the bot
        answers: <a href="/bot">Bot</a>.
      </p>
      {failing.length > 0 && (
        <div className={`notice ${styles.banner}`} role="alert" data-testid="newly-failing-banner">
          <strong>Newly failing:</strong> {plural(failing.length, 'answer test', 'answer tests')} passed before the last change and{' '}
          {failing.length === 1 ? 'fails' : 'fail'} now (
          {failing.slice(0, 3).map((q, i) => (
            <span key={q}>
              {i > 0 && ', '}“{q.length > 80 ? `${q.slice(0, 80)}…` : q}”
            </span>
          ))}
          {failing.length > 3 ? ', …' : ''}). {can(role, 'bot.manage') && <Link href="/bot/tests">See the answer tests</Link>}
        </div>
      )}
      {editable && <UploadDocument />}
      <section className="panel" aria-labelledby="docs-heading">
        <h2 id="docs-heading" style={{ marginTop: 0 }}>
          Documents
        </h2>
        {docs.length === 0 ? (
          <p className="empty">No documents yet{editable ? ': upload one above' : ''}.</p>
        ) : (
          <div className="table-scroll">
            <table className={`simple ${stacked.stack}`}>
              <thead>
                <tr>
                  <th scope="col">Title</th>
                  <th scope="col">File</th>
                  <th scope="col">Type</th>
                  <th scope="col">Size</th>
                  <th scope="col">Passages</th>
                  <th scope="col">Added (UTC)</th>
                  <th scope="col">
                    <span className="skip">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {docs.map((d) => (
                  <tr key={d.id}>
                    <td data-label="Title">
                      <span className={styles.wrap}>
                        {d.title || d.filename}
                        {d.versions.length > 0 && (
                          <details className={styles.versions}>
                            <summary>Previous versions ({d.versions.length})</summary>
                            <ul>
                              {d.versions.map((v) => (
                                <li key={v.id}>
                                  <span>
                                    {v.filename} · {when(v.createdAt)} · {fileSize(v.size)} ·{' '}
                                    <Link href={`/knowledge?document=${v.id}#passages`}>{plural(v.chunks, 'passage', 'passages')}</Link>
                                  </span>
                                  {editable && <RestoreButton id={v.id} name={`${v.filename} of ${when(v.createdAt)}`} />}
                                </li>
                              ))}
                            </ul>
                          </details>
                        )}
                      </span>
                    </td>
                    <td data-label="File">
                      <span className={styles.wrap}>{d.filename}</span>
                    </td>
                    <td data-label="Type">{documentKind(d.contentType)}</td>
                    <td data-label="Size" style={{ whiteSpace: 'nowrap' }}>
                      {fileSize(d.size)}
                    </td>
                    <td data-label="Passages">
                      <Link
                        href={`/knowledge?document=${d.id}#passages`}
                        aria-label={`Read the ${plural(d.chunks, 'passage', 'passages')} of ${d.title || d.filename}`}
                      >
                        {d.chunks}
                      </Link>
                    </td>
                    <td data-label="Added (UTC)" style={{ whiteSpace: 'nowrap' }}>
                      {when(d.createdAt)}
                    </td>
                    <td data-label="">{editable && <DeleteDocumentButton id={d.id} filename={d.filename} />}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {editable && <ImportWebsite />}
      <RefreshWhileImporting active={importing} />
      {sites.length > 0 && (
        <section className="panel" aria-labelledby="sites-heading">
          <h2 id="sites-heading" style={{ marginTop: 0 }}>
            Imported websites
          </h2>
          <div className="table-scroll">
            <table className={`simple ${stacked.stack}`}>
              <thead>
                <tr>
                  <th scope="col">Address</th>
                  <th scope="col">Status</th>
                  <th scope="col">Pages</th>
                  <th scope="col">
                    <span className="skip">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {sites.map((s) => {
                  const pages = all.filter((d) => d.siteId === s.id);
                  return (
                    <tr key={s.id}>
                      <td data-label="Address">
                        <span className={styles.wrap}>{s.url}</span>
                      </td>
                      <td data-label="Status">
                        <span role="status" className={styles.wrap}>
                          {s.status === 'queued' || s.status === 'crawling'
                            ? `Importing… ${plural(s.pages, 'page', 'pages')} read so far`
                            : s.status === 'failed'
                              ? `Stopped: ${s.error}`
                              : `Imported ${when(s.finishedAt)} UTC`}
                        </span>
                      </td>
                      <td data-label="Pages">
                        {pages.length === 0 ? (
                          '0'
                        ) : (
                          <details className={styles.versions}>
                            <summary>{plural(pages.length, 'page', 'pages')}</summary>
                            <ul>
                              {pages.map((p) => (
                                <li key={p.id}>
                                  <Link href={`/knowledge?document=${p.id}#passages`} style={{ overflowWrap: 'anywhere' }}>
                                    {p.title || p.sourceUrl}
                                  </Link>
                                </li>
                              ))}
                            </ul>
                          </details>
                        )}
                      </td>
                      <td data-label="">
                        {editable && (
                          <span className={styles.actions}>
                            <ResyncButton id={s.id} url={s.url} importing={s.status === 'queued' || s.status === 'crawling'} />
                            <RemoveWebsiteButton id={s.id} url={s.url} />
                          </span>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </section>
      )}
      {reading && (
        <section className="panel" id="passages" aria-labelledby="passages-heading">
          <h2 id="passages-heading" style={{ marginTop: 0 }}>
            Passages of {reading.title || reading.filename}
            {reading.supersededAt ? ' (a previous version)' : ''}
          </h2>
          <p className="muted" style={{ marginTop: 0 }}>
            {reading.sourceUrl ?? reading.filename} · {plural(reading.passages.length, 'passage', 'passages')} · <Link href="/knowledge">Close</Link>
          </p>
          <ol className={styles.passages}>
            {reading.passages.map((p) => (
              <li key={p.ordinal}>
                {p.context && <span className={styles.context}>{p.context.replace(/\n/g, ' › ')}</span>}
                {p.content.replace(/^#{1,6}[ \t]+/gm, '')}
              </li>
            ))}
          </ol>
        </section>
      )}
      <CuratedAnswers accountId={accountId} editable={editable} />
      <Synonyms accountId={accountId} editable={editable} />
      <TryQuestion />
    </>
  );
}
