import { isUtf8 } from 'node:buffer';

/**
 * File type by content, never by name or declared type (docs/contracts.md §6). Text formats are told
 * apart by extension only after the bytes proved to be text that is not HTML or SVG.
 */
export type Sniffed = { contentType: string; kind: 'image' | 'document' } | { rejected: string };

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

function startsWith(buf: Uint8Array, bytes: number[], offset = 0): boolean {
  return bytes.every((b, i) => buf[offset + i] === b);
}
const ascii = (buf: Uint8Array, from: number, to: number) => Buffer.from(buf.subarray(from, to)).toString('latin1');

/** How many leading bytes decide a type (a DOCX names its parts within them). */
export const SNIFF_BYTES = 64 * 1024;

/**
 * `buf` may be only the first bytes of the file (`partial`): a multi-byte character cut at its
 * end is then no reason to call it binary; the rest of a text file is checked as it streams
 * (textChecker) or when it is read (the document worker).
 */
export function sniffType(buf: Uint8Array, filename: string, opts: { partial?: boolean } = {}): Sniffed {
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
  if (
    startsWith(buf, [0x4d, 0x5a]) ||
    startsWith(buf, [0x7f, 0x45, 0x4c, 0x46]) ||
    startsWith(buf, [0xca, 0xfe, 0xba, 0xbe]) ||
    startsWith(buf, [0xcf, 0xfa, 0xed, 0xfe]) ||
    startsWith(buf, [0xce, 0xfa, 0xed, 0xfe]) ||
    ascii(buf, 0, 2) === '#!' ||
    startsWith(buf, [0x00, 0x61, 0x73, 0x6d])
  ) {
    return { rejected: 'executables are not accepted' };
  }
  const text = decodeText(buf.subarray(0, SNIFF_BYTES), (opts.partial ?? false) || buf.length > SNIFF_BYTES);
  if (text === null) return { rejected: 'this file type is not accepted' };
  const head = text.slice(0, 4096).trimStart().toLowerCase();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!doctype svg|<svg)/.test(head) || head.includes('<svg')) return { rejected: 'SVG images are not accepted' };
  if (/^<!doctype html|^<html|<script[\s>]|<body[\s>]|<iframe[\s>]/.test(head)) return { rejected: 'HTML files are not accepted' };
  const ext = filename.toLowerCase().split('.').pop();
  if (ext === 'md' || ext === 'markdown') return { contentType: 'text/markdown', kind: 'document' };
  if (ext === 'csv') return { contentType: 'text/csv', kind: 'document' };
  return { contentType: 'text/plain', kind: 'document' };
}

// eslint-disable-next-line no-control-regex
const BINARY_CONTROL = /[\u0000-\u0008\u000e-\u001a\u001c-\u001f]/;

/** UTF-8 text without NUL or other binary control bytes, else null (`partial`: more bytes follow). */
export function decodeText(buf: Uint8Array, partial = false): string | null {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buf, { stream: partial });
  } catch {
    return null;
  }
  if (BINARY_CONTROL.test(text)) return null;
  return text.replace(/^\uFEFF/, '');
}

/** True when a byte is a control character that plain text never holds (tab, newlines, FF and ESC are fine). */
function hasBinaryControl(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c < 0x20 && (c <= 0x08 || (c >= 0x0e && c <= 0x1a) || c >= 0x1c)) return true;
  }
  return false;
}

/** Bytes at the end of `buf` that start a UTF-8 sequence the next chunk completes. */
function incompleteTail(buf: Uint8Array): number {
  for (let i = buf.length - 1, seen = 1; i >= 0 && seen <= 4; i--, seen++) {
    const b = buf[i]!;
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return seen < need ? seen : 0;
  }
  return 0;
}

/**
 * Checks a text file chunk by chunk as it streams: strict UTF-8, no binary control bytes. Works
 * on the bytes (no strings are made), so a large text upload costs no memory to check.
 */
export function textChecker() {
  let carry = Buffer.alloc(0);
  return {
    push(chunk: Uint8Array): boolean {
      const buf = carry.length ? Buffer.concat([carry, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const cut = buf.length - incompleteTail(buf);
      carry = Buffer.from(buf.subarray(cut));
      const whole = buf.subarray(0, cut);
      return isUtf8(whole) && !hasBinaryControl(whole);
    },
    end: () => carry.length === 0,
  };
}

export const DOCX_TYPE = DOCX;
