import { can } from '@/lib/auth/roles';
import { requirePageMember } from '@/lib/auth/session';
import { listKnowledge } from '@/lib/knowledge/service';
import { TryQuestion } from '../bot/BotForms';
import { DeleteDocumentButton, UploadDocument } from './KnowledgeForms';

export const metadata = { title: 'Knowledge base · svc' };

export default async function KnowledgePage() {
  const { accountId, role } = await requirePageMember('knowledge.read');
  const editable = can(role, 'knowledge.write');
  const docs = await listKnowledge(accountId);
  return (
    <>
      <h1>Knowledge base</h1>
      <p className="muted">
        The bot answers from these documents (txt, Markdown, HTML, PDF, DOCX), split into passages. Visitors see each document&apos;s title (its first heading).
        How the bot answers: <a href="/bot">Bot</a>.
      </p>
      {editable && <UploadDocument />}
      <section className="panel" aria-labelledby="docs-heading">
        <h2 id="docs-heading" style={{ marginTop: 0 }}>
          Documents
        </h2>
        {docs.length === 0 ? (
          <p className="empty">No documents yet{editable ? ': upload one above' : ''}.</p>
        ) : (
          <div className="table-scroll">
            <table className="simple">
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
                    <td>{d.title || d.filename}</td>
                    <td>{d.filename}</td>
                    <td>{d.contentType}</td>
                    <td>{(d.size / 1024).toFixed(1)} KB</td>
                    <td>{d.chunks}</td>
                    <td>{new Date(d.createdAt).toISOString().slice(0, 16).replace('T', ' ')}</td>
                    <td>{editable && <DeleteDocumentButton id={d.id} filename={d.filename} />}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <TryQuestion />
    </>
  );
}
