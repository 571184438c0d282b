// A received mail read for the email channel (docs/decisions/email.md), in a worker thread of the
// document pool (lib/documents/pool.ts `readMailInWorker`): the MIME by mailparser, the new text of a
// reply by email-reply-parser (quoted history and signatures removed; both maintained libraries),
// an HTML-only mail as text through this folder's HTML reader. Never on the main thread: the reply
// parser's patterns are not linear, so the worker's time limit bounds them.
import EmailReplyParser from 'email-reply-parser';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { MAX_MESSAGE_ATTACHMENTS } from '../limits/text';
import { cleanAddress } from './mail-address';
import { htmlToMarkdown } from './extract-worker';

/** Text kept from one mail at most. */
export const MAIL_TEXT_CHARS = 100_000;
/** Text the reply parser reads at most: the new text is at the top, and its patterns are not linear (90 KB of `>` took 20 s). */
export const REPLY_PARSE_CHARS = 20_000;
/**
 * The longest line the reply parser is given: its cost grows with the square of a line's length
 * (one line of 20,000 `>` took 10 s on a busy machine, 20 lines of 1,000 under 0.4 s). A text with
 * a longer line is kept whole, as when the parser runs out of time, without spending that time.
 */
export const REPLY_PARSE_LINE_CHARS = 2_000;

/** An image shown in the mail's body under this size is decoration (signature logos, icons, tracking pixels), not a file the sender attached. */
export const INLINE_IMAGE_MIN_BYTES = 10 * 1024;

export type DeliveryReport = { failed: boolean; reason: string; messageIds: string[] };
/** A file of the mail, its declared type (the upload rules decide the real one by content) and its decoded bytes. */
export type MailAttachment = { filename: string; contentType: string; size: number; content: Uint8Array };
export type ReadMail = {
  messageId: string | null;
  inReplyTo: string | null;
  references: string[];
  from: { address: string; name: string } | null;
  replyTo: string | null;
  subject: string;
  /** The mail's new text: the reply without the quoted history and the signature. */
  text: string;
  /** Whether the mail says it is automatic or bulk (never answered by mail). */
  automatic: boolean;
  /** A delivery report (multipart/report): no conversation, it reports on another mail. */
  report: boolean;
  /** What a delivery status report (RFC 3464) says: whether delivery failed, why, and the Message-IDs of the mail it reports on. */
  delivery: DeliveryReport | null;
  /** The mail's files, at most MAX_MESSAGE_ATTACHMENTS (their bytes together never more than the raw mail's). */
  attachments: MailAttachment[];
  /** Files of the mail beyond those. */
  attachmentsLeftOut: number;
  /** Why its body could not be read (past the MIME parser's bounds), else null: its text only says so. */
  unreadable: string | null;
  /** The `X-Svc-Test` header of svc's own test mail (/email "Send a test email"), else null. */
  svcTest: string | null;
};

const firstAddress = (a: AddressObject | AddressObject[] | undefined) => (Array.isArray(a) ? a[0] : a)?.value.find((v) => v.address);

/** Text of a header (a decoded display name or subject) on one line: an encoded CR/LF never becomes a line of a mail svc writes. */
const oneLine = (s: string, max: number) =>
  s
    .replace(/[\s\u0000-\u001f\u007f]+/g, ' ')
    .trim()
    .slice(0, max);

const ids = (v: string | string[] | undefined): string[] =>
  (Array.isArray(v) ? v : v ? v.split(/\s+/) : [])
    .map((s) => s.trim())
    .filter((s) => /^<[^<>\s]{1,990}>$/.test(s))
    .slice(0, 100);

/** Auto-replies and bulk mail by their headers (docs/contracts.md §17 "never answered"). */
function isAutomatic(h: Map<string, unknown>): boolean {
  const text = (k: string) => String(h.get(k) ?? '').toLowerCase();
  const auto = text('auto-submitted');
  if (auto && auto !== 'no') return true;
  if (['bulk', 'junk', 'list'].includes(text('precedence').trim())) return true;
  return h.has('list-id') || h.has('x-autoreply') || h.has('x-autorespond');
}

/** `replies: false` skips the reply parser (the whole text is kept): the fallback when it ran out of time. */
export async function readMail(raw: Uint8Array, o: { replies: boolean } = { replies: true }): Promise<ReadMail> {
  const { m, unreadable } = await parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength));
  const from = firstAddress(m.from);
  const fromAddress = cleanAddress(from?.address);
  const body = unreadable
    ? `[The body of this mail could not be read (${unreadable}); "Show original" has it as it arrived.]`
    : (m.text?.trim() ? m.text : m.html ? htmlToMarkdown(m.html, MAIL_TEXT_CHARS) : '').slice(0, MAIL_TEXT_CHARS);
  const head = body.slice(0, REPLY_PARSE_CHARS);
  const parsable = o.replies && head.split('\n').every((line) => line.length <= REPLY_PARSE_LINE_CHARS);
  const visible = parsable ? new EmailReplyParser().parseReply(head).trim() : '';
  const contentType = String((m.headers.get('content-type') as { value?: string } | undefined)?.value ?? '').toLowerCase();
  const report = contentType === 'multipart/report';
  return {
    messageId: ids(m.messageId)[0] ?? null,
    inReplyTo: ids(m.inReplyTo)[0] ?? null,
    references: ids(m.references),
    from: fromAddress ? { address: fromAddress, name: oneLine(from?.name ?? '', 200) } : null,
    replyTo: cleanAddress(firstAddress(m.replyTo)?.address),
    subject: oneLine(m.subject ?? '', 998),
    // A reply that is only quoted history (the parser keeps nothing) keeps its whole text rather than none.
    text: visible || body.trim(),
    automatic: isAutomatic(m.headers as Map<string, unknown>),
    report,
    delivery: report ? deliveryReport(m.headers, m.text ?? '', m.attachments) : null,
    // A report's parts are the returned mail and its status, never files of a conversation.
    ...(report || unreadable ? { attachments: [], attachmentsLeftOut: 0 } : filesOf(m.attachments, raw.byteLength)),
    unreadable,
    svcTest: oneLine(String(m.headers.get('x-svc-test') ?? ''), 200) || null,
  };
}

/** The first lines of a mail up to its first empty line (its top header), at most 64 KB cut at a line's end. */
function topHeader(raw: Buffer): Buffer {
  const window = raw.subarray(0, 65_536);
  const blank = window.indexOf('\r\n\r\n') >= 0 ? window.indexOf('\r\n\r\n') : window.indexOf('\n\n');
  if (blank >= 0) return window.subarray(0, blank);
  const lastLine = window.lastIndexOf('\n');
  return lastLine > 0 ? window.subarray(0, lastLine) : Buffer.alloc(0);
}

/**
 * The MIME by mailparser under its own bounds (at most 1000 parts, 1 MB of header per part: past
 * either it stops with EMAXLEN). A mail past them is still a mail from its sender: its top header
 * is read alone and its body named unreadable, so it reaches the team instead of failing every retry.
 */
async function parse(raw: Buffer): Promise<{ m: ParsedMail; unreadable: string | null }> {
  const options = { skipImageLinks: true, skipTextLinks: true, skipTextToHtml: true };
  try {
    return { m: await simpleParser(raw, options), unreadable: null };
  } catch (e) {
    if ((e as { code?: string }).code !== 'EMAXLEN') throw e;
    const head = Buffer.concat([topHeader(raw), Buffer.from('\r\n\r\n')]);
    return { m: await simpleParser(head, options), unreadable: (e as Error).message };
  }
}

type ParsedAttachment = { filename?: string; contentType: string; contentDisposition?: string; related?: boolean; size: number; content: Buffer };

/**
 * The files a sender attached (docs/decisions/email.md): every attachment part, and an image shown
 * in the body (inline, or related to the HTML) when it has a name and is not tiny. The first
 * MAX_MESSAGE_ATTACHMENTS cross back to the main thread with their bytes; decoded parts are smaller
 * than their encoding, so they hold at most the raw mail's size (the bound is kept all the same).
 */
function filesOf(parts: ParsedAttachment[], rawBytes: number): { attachments: MailAttachment[]; attachmentsLeftOut: number } {
  const files = parts.filter(
    (a) => !((a.related || a.contentDisposition === 'inline') && (!a.filename || (a.contentType.startsWith('image/') && a.size < INLINE_IMAGE_MIN_BYTES))),
  );
  const attachments: MailAttachment[] = [];
  let bytes = 0;
  for (const a of files.slice(0, MAX_MESSAGE_ATTACHMENTS)) {
    bytes += a.content.byteLength;
    if (bytes > rawBytes) break;
    attachments.push({
      filename: (a.filename ?? 'attachment').slice(0, 200),
      contentType: a.contentType,
      size: a.content.byteLength,
      content: new Uint8Array(a.content),
    });
  }
  return { attachments, attachmentsLeftOut: files.length - attachments.length };
}

/** Unfolded header fields of a header block (`Name: value` lines, continuation lines joined), first 64 KB. */
function fields(block: string): Array<[string, string]> {
  return block
    .slice(0, 65_536)
    .replace(/\r?\n[ \t]+/g, ' ')
    .split(/\r?\n/)
    .map((l) => /^([A-Za-z0-9-]{1,60}):[ \t]*(.*)$/.exec(l))
    .filter((x): x is RegExpExecArray => !!x)
    .map((x) => [x[1]!.toLowerCase(), x[2]!.trim()]);
}

/**
 * A delivery status notification (RFC 3464, `report-type=delivery-status`): its per-recipient
 * `Action` fields (mailparser gives the message/delivery-status part as text, or as an attachment),
 * the `Diagnostic-Code` or `Status` as the reason, and the Message-ID of the returned message — its
 * `text/rfc822-headers` or `message/rfc822` part, else an `Original-Message-ID` field.
 */
function deliveryReport(headers: Map<string, unknown>, text: string, attachments: Array<{ contentType: string; content: Buffer }>): DeliveryReport {
  const type = headers.get('content-type') as { params?: Record<string, string> } | undefined;
  const kind = String(type?.params?.['report-type'] ?? '').toLowerCase();
  const statusText = [text, ...attachments.filter((a) => a.contentType === 'message/delivery-status').map((a) => a.content.toString('utf8'))].join('\n');
  const status = fields(statusText);
  const actions = status.filter(([k]) => k === 'action').map(([, v]) => v.toLowerCase());
  const returned = attachments.filter((a) => a.contentType === 'text/rfc822-headers' || a.contentType === 'message/rfc822');
  const ids = [
    ...returned.flatMap((a) => fields(a.content.toString('utf8').split(/\r?\n\r?\n/, 1)[0] ?? '').filter(([k]) => k === 'message-id')),
    ...status.filter(([k]) => k === 'original-message-id'),
  ].flatMap(([, v]) => /<[^<>\s]{1,990}>/.exec(v)?.[0] ?? []);
  const diagnostic = status.find(([k]) => k === 'diagnostic-code')?.[1] ?? status.find(([k]) => k === 'status')?.[1] ?? '';
  return {
    failed: (kind === '' || kind === 'delivery-status') && actions.includes('failed'),
    reason:
      diagnostic
        .replace(/^smtp;\s*/i, '')
        .replace(/\s+/g, ' ')
        .slice(0, 300) || 'The receiving server reported the mail undeliverable',
    messageIds: [...new Set(ids)].slice(0, 10),
  };
}
