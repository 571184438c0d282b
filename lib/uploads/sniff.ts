/**
 * File type by content, never by name or declared type (CONTRACTS §6). Text formats are told
 * apart by extension only after the bytes proved to be text that is not HTML or SVG.
 */
export type Sniffed = { contentType: string; kind: 'image' | 'document' } | { rejected: string };

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

function startsWith(buf: Uint8Array, bytes: number[], offset = 0): boolean {
  return bytes.every((b, i) => buf[offset + i] === b);
}
const ascii = (buf: Uint8Array, from: number, to: number) => Buffer.from(buf.subarray(from, to)).toString('latin1');

export function sniffType(buf: Uint8Array, filename: string): Sniffed {
  if (buf.length === 0) return { rejected: 'the file is empty' };
  if (startsWith(buf, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { contentType: 'image/png', kind: 'image' };
  if (startsWith(buf, [0xff, 0xd8, 0xff])) return { contentType: 'image/jpeg', kind: 'image' };
  if (ascii(buf, 0, 6) === 'GIF87a' || ascii(buf, 0, 6) === 'GIF89a') return { contentType: 'image/gif', kind: 'image' };
  if (ascii(buf, 0, 4) === 'RIFF' && ascii(buf, 8, 12) === 'WEBP') return { contentType: 'image/webp', kind: 'image' };
  if (ascii(buf, 0, 5) === '%PDF-') return { contentType: 'application/pdf', kind: 'document' };
  if (startsWith(buf, [0x50, 0x4b, 0x03, 0x04])) {
    const head = ascii(buf, 0, Math.min(buf.length, 64 * 1024));
    if (head.includes('word/') && head.includes('[Content_Types].xml')) return { contentType: DOCX, kind: 'document' };
    return { rejected: 'ZIP archives other than .docx are not accepted' };
  }
  if (startsWith(buf, [0x4d, 0x5a]) || startsWith(buf, [0x7f, 0x45, 0x4c, 0x46]) || startsWith(buf, [0xca, 0xfe, 0xba, 0xbe])
    || startsWith(buf, [0xcf, 0xfa, 0xed, 0xfe]) || startsWith(buf, [0xce, 0xfa, 0xed, 0xfe]) || ascii(buf, 0, 2) === '#!'
    || startsWith(buf, [0x00, 0x61, 0x73, 0x6d])) {
    return { rejected: 'executables are not accepted' };
  }
  const text = decodeText(buf);
  if (text === null) return { rejected: 'this file type is not accepted' };
  const head = text.slice(0, 4096).trimStart().toLowerCase();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!doctype svg|<svg)/.test(head) || head.includes('<svg')) return { rejected: 'SVG images are not accepted' };
  if (/^<!doctype html|^<html|<script[\s>]|<body[\s>]|<iframe[\s>]/.test(head)) return { rejected: 'HTML files are not accepted' };
  const ext = filename.toLowerCase().split('.').pop();
  if (ext === 'md' || ext === 'markdown') return { contentType: 'text/markdown', kind: 'document' };
  if (ext === 'csv') return { contentType: 'text/csv', kind: 'document' };
  return { contentType: 'text/plain', kind: 'document' };
}

/** UTF-8 text without NUL or other binary control bytes, else null. */
export function decodeText(buf: Uint8Array): string | null {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    return null;
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000e-\u001a\u001c-\u001f]/.test(text.slice(0, 65536))) return null;
  return text.replace(/^\uFEFF/, '');
}

export const DOCX_TYPE = DOCX;
