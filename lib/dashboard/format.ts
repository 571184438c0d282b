/** Small display helpers every dashboard page uses. */

/** A count with its noun: "1 like", "0 likes", "1,204 responses". */
export function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

/** A file size people read: "8 bytes", "1 byte", "12.3 KB", "4.5 MB". */
export function fileSize(bytes: number): string {
  if (bytes < 1024) return plural(bytes, 'byte', 'bytes');
  const [n, unit] = bytes < 1024 * 1024 ? [bytes / 1024, 'KB'] : [bytes / 1024 / 1024, 'MB'];
  return `${n.toFixed(1).replace(/\.0$/, '')} ${unit}`;
}

const DOCUMENT_KINDS: Record<string, string> = {
  'text/plain': 'Text',
  'text/markdown': 'Markdown',
  'text/html': 'HTML',
  'text/csv': 'CSV',
  'application/pdf': 'PDF',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'Word',
};

/** A document's type by name ("PDF", "Word"), not its media type. */
export function documentKind(contentType: string): string {
  return DOCUMENT_KINDS[contentType] ?? contentType;
}
