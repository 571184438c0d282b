/** The one timestamp format of the service: UTC `YYYY-MM-DD HH:MM:SS` (docs/contracts.md §3). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isValidTimestamp } from '../../lib/api/timestamps';

describe('isValidTimestamp', () => {
  const VALID = [
    '2026-01-31 14:05:09',
    '2026-12-31 23:59:59',
    '2026-01-01 00:00:00',
    '2024-02-29 12:00:00',
    '2000-02-29 00:00:00',
    '0001-01-01 00:00:00',
    '9999-12-31 23:59:59',
    '1970-01-01 00:00:00',
  ];
  for (const text of VALID) it(`accepts ${text}`, () => assert.equal(isValidTimestamp(text), true));

  const INVALID: Array<[string, string]> = [
    ['2026-02-30 10:00:00', 'February 30th'],
    ['2026-02-29 10:00:00', 'February 29th of a common year'],
    ['1900-02-29 10:00:00', 'February 29th of a century that is not a leap year'],
    ['2026-04-31 10:00:00', 'April 31st'],
    ['2026-13-01 10:00:00', 'month 13'],
    ['2026-00-10 10:00:00', 'month 0'],
    ['2026-01-00 10:00:00', 'day 0'],
    ['2026-01-32 10:00:00', 'day 32'],
    ['2026-01-01 24:00:00', 'hour 24'],
    ['2026-01-01 23:60:00', 'minute 60'],
    ['2026-12-31 23:59:60', 'a leap second'],
    ['0000-01-01 00:00:00', 'year 0'],
    ['2026-01-01T10:00:00', "ISO 'T' separator"],
    ['2026-01-01T10:00:00Z', 'ISO with Z'],
    ['2026-01-01 10:00:00Z', 'a Z suffix'],
    ['2026-01-01 10:00:00+00', 'an offset'],
    ['2026-01-01 10:00:00.000', 'milliseconds'],
    ['2026-01-01 10:00', 'no seconds'],
    ['2026-01-01', 'a date alone'],
    ['26-01-01 10:00:00', 'a two-digit year'],
    ['2026-1-1 10:00:00', 'one-digit month and day'],
    ['2026-01-01 1:00:00', 'a one-digit hour'],
    [' 2026-01-01 10:00:00', 'a leading space'],
    ['2026-01-01 10:00:00 ', 'a trailing space'],
    ['2026-01-01 10:00:00\n', 'a trailing newline'],
    ['2026-01-01  10:00:00', 'two spaces'],
    ['２０２６-01-01 10:00:00', 'full-width digits'],
    ['', 'the empty string'],
    ['1767261600', 'epoch seconds'],
  ];
  for (const [text, why] of INVALID) it(`rejects ${why}: ${JSON.stringify(text)}`, () => assert.equal(isValidTimestamp(text), false));
});
