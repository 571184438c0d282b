import { z } from 'zod';

/** Every timestamp of the API: UTC, `YYYY-MM-DD HH:MM:SS`. */
export const TIMESTAMP_RE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

export const Timestamp = z
  .string()
  .regex(TIMESTAMP_RE)
  .meta({
    description: 'UTC, YYYY-MM-DD HH:MM:SS',
    examples: ['2026-01-31 14:05:09'],
  });

/** True when the text is a real UTC calendar time in the API format (no 2026-02-30). */
export function isValidTimestamp(text: string): boolean {
  const m = TIMESTAMP_RE.exec(text);
  if (!m) return false;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, s));
  date.setUTCFullYear(y); // Date.UTC would read years 0-99 as 1900-1999
  return (
    y >= 1 &&
    date.getUTCFullYear() === y &&
    date.getUTCMonth() === mo - 1 &&
    date.getUTCDate() === d &&
    date.getUTCHours() === h &&
    date.getUTCMinutes() === mi &&
    date.getUTCSeconds() === s
  );
}
