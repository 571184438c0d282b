import { attachmentUrl } from '@/lib/api/links';
import { fileSize } from '@/lib/dashboard/format';

/** A message's files (a widget upload, a mail's attachment), each a download link with its type and size. */
export function Attachments({ files }: { files: ReadonlyArray<{ id: string; filename: string; content_type: string; size: number }> }) {
  if (files.length === 0) return null;
  return (
    <ul className="sources" aria-label="Attachments">
      {files.map((a) => (
        <li key={a.id}>
          <a href={attachmentUrl(a.id)} download>
            {a.filename}
          </a>{' '}
          ({a.content_type}, {fileSize(a.size)})
        </li>
      ))}
    </ul>
  );
}
