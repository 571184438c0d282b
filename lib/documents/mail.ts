// A received mail read for the email channel (docs/decisions/email.md), in a worker thread of the
// document pool (lib/documents/pool.ts `readMailInWorker`): the MIME by mailparser, the new text of a
// reply by email-reply-parser (quoted history and signatures removed; both maintained libraries),
// an HTML-only mail as text through this folder's HTML reader. Never on the main thread: the reply
// parser's patterns are not linear, so the worker's time limit bounds them.
import EmailReplyParser from 'email-reply-parser';
import { simpleParser, type AddressObject } from 'mailparser';
import { htmlToMarkdown } from './extract-worker';

/** Text kept from one mail at most. */
export const MAIL_TEXT_CHARS = 100_000;
/**
 * Text the reply parser reads at most: the new text is at the top, and its patterns are quadratic on
 * some lines (90 KB of `>` took 20 s; 20 K characters take about a second).
 */
export const REPLY_PARSE_CHARS = 20_000;

export type DeliveryReport = { failed: boolean; reason: string; messageIds: string[] };
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
  attachments: MailAttachment[];
  /** The `X-Svc-Test` header of svc's own test mail (/email "Send a test email"), else null. */
  svcTest: string | null;
};

const firstAddress = (a: AddressObject | AddressObject[] | undefined) => (Array.isArray(a) ? a[0] : a)?.value.find((v) => v.address);

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
  const m = await simpleParser(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), { skipImageLinks: true, skipTextLinks: true, skipTextToHtml: true });
  const from = firstAddress(m.from);
  const replyTo = firstAddress(m.replyTo);
  const body = (m.text?.trim() ? m.text : m.html ? htmlToMarkdown(m.html, MAIL_TEXT_CHARS) : '').slice(0, MAIL_TEXT_CHARS);
  const visible = o.replies ? new EmailReplyParser().parseReply(body.slice(0, REPLY_PARSE_CHARS)).trim() : '';
  const contentType = String((m.headers.get('content-type') as { value?: string } | undefined)?.value ?? '').toLowerCase();
  return {
    messageId: ids(m.messageId)[0] ?? null,
    inReplyTo: ids(m.inReplyTo)[0] ?? null,
    references: ids(m.references),
    from: from?.address ? { address: from.address.toLowerCase(), name: (from.name ?? '').slice(0, 200) } : null,
    replyTo: replyTo?.address?.toLowerCase() ?? null,
    subject: (m.subject ?? '').replace(/\s+/g, ' ').trim().slice(0, 998),
    // A reply that is only quoted history (the parser keeps nothing) keeps its whole text rather than none.
    text: visible || body.trim(),
    automatic: isAutomatic(m.headers as Map<string, unknown>),
    report: contentType === 'multipart/report',
    delivery: contentType === 'multipart/report' ? deliveryReport(m.headers, m.text ?? '', m.attachments) : null,
    attachments: m.attachments
      .filter((a) => a.contentDisposition !== 'inline' || !a.related)
      .slice(0, 20)
      .map((a) => ({ filename: (a.filename ?? 'attachment').slice(0, 200), contentType: a.contentType, size: a.size, content: new Uint8Array(a.content) })),
    svcTest:
      String(m.headers.get('x-svc-test') ?? '')
        .trim()
        .slice(0, 200) || null,
  };
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
