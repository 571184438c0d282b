import { AppError } from '../core/errors';
import { SNIFF_BYTES, sniffType, textChecker } from '../documents/sniff';

/**
 * The rules every upload meets, whichever door it comes through (the widget's POST, a mail's
 * attachments; docs/contracts.md §6): its type by content, UPLOAD_MAX_BYTES, the account's quota.
 * A refusal is an AppError whose detail starts with the file's name when it is known.
 */
const ALLOWED = 'Allowed: PNG, JPEG, GIF, WebP, PDF, DOCX, text, Markdown, CSV.';

export const notAccepted = (filename: string, why: string) => new AppError('unsupported_media_type', `${filename}: ${why}. ${ALLOWED}`);

export const tooLarge = (max: number, filename?: string) =>
  new AppError('payload_too_large', `${filename ? `${filename}: files` : 'Files'} may be at most ${max} bytes.`);

export const quotaFull = (usedBytes: number, quotaBytes: number, filename?: string) =>
  new AppError(
    'payload_too_large',
    `${filename ? `${filename}: this` : 'This'} account's upload storage is full (${usedBytes} of ${quotaBytes} bytes in use); unused uploads are deleted after a day.`,
  );

export function safeFilename(name: string | undefined): string {
  return (name || 'upload').replace(/[\u0000-\u001f\u007f/\\]/g, '_').slice(-200);
}

/**
 * The type of a file by its bytes as they come: decided by the first SNIFF_BYTES, text checked to
 * its end (valid UTF-8, no binary). `write` receives every byte once its type is decided; a refusal
 * throws before the rest is written.
 */
export async function typeByContent(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  filename: string,
  write: (chunk: Uint8Array) => Promise<void>,
): Promise<string> {
  let head: Uint8Array[] = [];
  let headBytes = 0;
  let contentType: string | null = null;
  let text: ReturnType<typeof textChecker> | null = null;
  const decide = async (partial: boolean) => {
    const bytes = Buffer.concat(head);
    head = [];
    const sniffed = sniffType(bytes, filename, { partial });
    if ('rejected' in sniffed) throw notAccepted(filename, sniffed.rejected);
    contentType = sniffed.contentType;
    if (contentType.startsWith('text/')) text = textChecker();
    await take(bytes);
  };
  const take = async (chunk: Uint8Array) => {
    if (text && !text.push(chunk)) throw notAccepted(filename, 'the text is not valid UTF-8 or contains binary data');
    await write(chunk);
  };
  for await (const chunk of chunks) {
    if (contentType) {
      await take(chunk);
    } else {
      head.push(chunk);
      headBytes += chunk.length;
      if (headBytes >= SNIFF_BYTES) await decide(true);
    }
  }
  if (!contentType) await decide(false);
  else if (text && !(text as ReturnType<typeof textChecker>).end()) throw notAccepted(filename, 'the text is not valid UTF-8');
  return contentType!;
}
