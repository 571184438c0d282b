/** Every Customer API path starts here. */
export const API_BASE = '/customer-api/v2';

/** The two lists' paths (relative to API_BASE): the operation table and the dashboard tables share them. */
export const LIST_PATHS = { responses: '/response', conversations: '/conversation' } as const;

/** The attachment download's path (relative to API_BASE): the operation table and the links below share it. */
export const ATTACHMENT_PATH = '/attachments/{attachment_id}' as const;

/**
 * The link to an attachment's bytes, as every record that names an attachment carries it:
 * relative (a path starting with API_BASE), like the list envelopes' next/previous links.
 */
export function attachmentUrl(attachmentId: string): string {
  return `${API_BASE}${ATTACHMENT_PATH.replace('{attachment_id}', encodeURIComponent(attachmentId))}`;
}
