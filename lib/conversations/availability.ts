/**
 * Whether a person is there (docs/decisions/handoff.md): the handoff settings, office hours in the
 * account's time zone, members online, the expected wait; members' availability and dashboard presence.
 */
import { withAudit } from '../audit/service';
import type { AuditBy } from '../audit/contract';
import { getDb, type Db } from '../../db/client';
import {
  countOnlineMembers,
  getHandoffSettingsRow,
  listFirstResponses,
  setMemberAvailability,
  touchMemberDashboard,
  upsertHandoffSettings,
} from '../../db/queries/availability';
import { validate } from '../accounts/service';
import { requireRole } from '../auth/roles';
import { AppError } from '../core/errors';
import { processSingleton } from '../core/process';
import { Availability, DEFAULT_HANDOFF_SETTINGS, HandoffSettings } from './handoff-contract';
import type { Member } from './handoff-contract';

export type AvailabilityInfo = {
  /** The account offers a person at all (handoff on). */
  enabled: boolean;
  /** A person is promised now: handoff on, within office hours, a member online. */
  available: boolean;
  /** When not available because of office hours: the next opening (ISO 8601, UTC); else null. */
  until: string | null;
  away_text: string;
  /** The median first response of the last 7 days (seconds), when available and known. */
  expected_wait_seconds: number | null;
};

/** Members count as online with a dashboard seen this recently (and availability `online`). */
export const ONLINE_WITHIN_SECONDS = 600;
const EXPECTED_WAIT_DAYS = 7;
/** The latest first responses the expected wait considers: enough for a median, bounded for a busy account. */
const EXPECTED_WAIT_SAMPLE = 2_000;

/** Formatters kept per time zone: building one costs ~50 µs, and an expected wait reads up to EXPECTED_WAIT_SAMPLE instants. */
const FORMATTERS_KEPT = 256;
/** Per process by nature (a cache of pure values): the formatter of each time zone, and how many this process built. */
const formatters = () => processSingleton('svc.handoffFormatters', () => ({ byZone: new Map<string, Intl.DateTimeFormat>(), built: 0 }));

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  const f = formatters();
  let fmt = f.byZone.get(timeZone);
  if (fmt) return fmt;
  fmt = new Intl.DateTimeFormat('en-US', {
    timeZone,
    weekday: 'short',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    hourCycle: 'h23',
  });
  f.built++;
  if (f.byZone.size >= FORMATTERS_KEPT) f.byZone.delete(f.byZone.keys().next().value!);
  f.byZone.set(timeZone, fmt);
  return fmt;
}

/** How many time-zone formatters this process has built (the handoff bench and test read it). */
export function timeZoneFormattersBuilt(): number {
  return formatters().built;
}

/** The wall time in a time zone: weekday (0 = Monday) and minutes since midnight. */
function wallTime(at: Date, timeZone: string): { day: number; minutes: number; y: number; m: number; d: number } {
  const parts = formatterOf(timeZone).formatToParts(at);
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  const day = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(get('weekday'));
  return { day, minutes: Number(get('hour')) * 60 + Number(get('minute')), y: Number(get('year')), m: Number(get('month')), d: Number(get('day')) };
}

/** The instant of a wall time in a time zone (two passes settle the zone's offset, DST included). */
function instantOf(y: number, m: number, d: number, minutes: number, timeZone: string): Date {
  const guess = Date.UTC(y, m - 1, d, 0, minutes);
  let t = guess;
  for (let i = 0; i < 2; i++) {
    const w = wallTime(new Date(t), timeZone);
    const asUtc = Date.UTC(w.y, w.m - 1, w.d, 0, w.minutes);
    t += guess - asUtc;
  }
  return new Date(t);
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

function openAt(s: HandoffSettings, w: { day: number; minutes: number }): boolean {
  const today = s.hours[w.day];
  return !!today?.open && minutesOf(today.opens) <= w.minutes && w.minutes < minutesOf(today.closes);
}

/** Whether `now` is within office hours, and if not the next opening (null: none in the coming week). */
export function officeHours(s: HandoffSettings, now: Date): { open: boolean; next: Date | null } {
  const w = wallTime(now, s.time_zone);
  if (openAt(s, w)) return { open: true, next: null };
  for (let ahead = 0; ahead <= 7; ahead++) {
    const day = s.hours[(w.day + ahead) % 7];
    if (!day?.open) continue;
    const opens = minutesOf(day.opens);
    if (ahead === 0 && opens <= w.minutes) continue;
    const date = new Date(Date.UTC(w.y, w.m - 1, w.d + ahead));
    return { open: false, next: instantOf(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), opens, s.time_zone) };
  }
  return { open: false, next: null };
}

/** Per process (docs/decisions/handoff.md): each account's expected wait, read at most once a minute and dropped when a first reply commits here. */
const EXPECTED_WAIT_TTL_MS = 60_000;
const EXPECTED_WAITS_KEPT = 10_000;
type ExpectedWait = { settings: string; until: number; seconds: number | null };
const expectedWaits = () => processSingleton('svc.handoffExpectedWaits', () => new Map<number, ExpectedWait>());

/** The median first response of the last 7 days within office hours (seconds), null when none; cached per account for a minute. */
async function expectedWaitOf(db: Db, accountId: number, s: HandoffSettings): Promise<number | null> {
  const cache = expectedWaits();
  const settings = JSON.stringify([s.time_zone, s.hours]);
  const now = Date.now();
  const hit = cache.get(accountId);
  if (hit && hit.settings === settings && hit.until > now) return hit.seconds;
  const responses = await listFirstResponses(db, accountId, EXPECTED_WAIT_DAYS, EXPECTED_WAIT_SAMPLE);
  // The expected wait counts first responses within office hours (docs/contracts.md §14): a night's wait says nothing of the day's.
  const waits = responses
    .filter((f) => openAt(s, wallTime(new Date(`${f.at.replace(' ', 'T')}Z`), s.time_zone)))
    .map((f) => f.seconds)
    .sort((a, b) => a - b);
  const median = waits.length === 0 ? null : Math.round((waits[(waits.length - 1) >> 1]! + waits[waits.length >> 1]!) / 2);
  if (cache.size >= EXPECTED_WAITS_KEPT) for (const [k, v] of cache) if (v.until <= now || cache.size >= EXPECTED_WAITS_KEPT) cache.delete(k);
  cache.set(accountId, { settings, until: now + EXPECTED_WAIT_TTL_MS, seconds: median });
  return median;
}

/** A first reply changed the account's median: this process reads it again (other instances within the minute). */
export function forgetExpectedWait(accountId: number): void {
  expectedWaits().delete(accountId);
}

/**
 * "Is anyone there?" (docs/decisions/handoff.md): a person is promised only with handoff on, within
 * office hours in the account's IANA time zone, and a member `online` with a dashboard seen in the
 * last 10 minutes. Expected wait: the median first response of the last 7 days, null when none;
 * computed only when a person is promised.
 */
export async function availabilityOf(db: Db, accountId: number, now: Date): Promise<AvailabilityInfo> {
  const s = await readSettings(db, accountId);
  if (!s.enabled) return { enabled: false, available: false, until: null, away_text: s.away_text, expected_wait_seconds: null };
  const hours = officeHours(s, now);
  const available = hours.open && (await countOnlineMembers(db, accountId, ONLINE_WITHIN_SECONDS)) > 0;
  return {
    enabled: true,
    available,
    until: hours.open ? null : (hours.next?.toISOString() ?? null),
    away_text: s.away_text,
    expected_wait_seconds: available ? await expectedWaitOf(db, accountId, s) : null,
  };
}

async function readSettings(db: Db, accountId: number): Promise<HandoffSettings> {
  const row = await getHandoffSettingsRow(db, accountId);
  if (!row) return DEFAULT_HANDOFF_SETTINGS;
  const parsed = HandoffSettings.safeParse({ ...row, hours: row.hours ?? DEFAULT_HANDOFF_SETTINGS.hours });
  return parsed.success ? parsed.data : { ...DEFAULT_HANDOFF_SETTINGS, enabled: row.enabled, away_text: row.away_text };
}

/** The account's handoff settings (the defaults when never saved). */
export async function getHandoffSettings(accountId: number): Promise<HandoffSettings> {
  return readSettings(await getDb(), accountId);
}

/** Saves the handoff settings (owner and admins: they are bot settings). */
export async function saveHandoffSettings(by: AuditBy, member: Member, input: unknown): Promise<HandoffSettings> {
  requireRole(member, 'bot.manage');
  const v = validate(HandoffSettings, input);
  const open = v.hours.filter((d) => d.open).length;
  const target = `${v.enabled ? 'visitors can ask for a person' : 'handoff off'}, ${v.time_zone}, open ${open} day${open === 1 ? '' : 's'} a week`;
  await withAudit(
    member.accountId,
    by,
    'handoff.settings_changed',
    (tx) => upsertHandoffSettings(tx, member.accountId, v),
    () => target,
  );
  return v;
}

export async function setAvailability(member: Member, availability: unknown): Promise<{ availability: Availability }> {
  const v = validate(Availability, availability);
  if (!(await setMemberAvailability(await getDb(), member.accountId, member.userId, v)))
    throw new AppError('forbidden', 'You are not a member of this account.');
  return { availability: v };
}

/** A dashboard socket of the member is open: they count as online for the next 10 minutes. */
export async function touchDashboard(member: Member): Promise<void> {
  await touchMemberDashboard(await getDb(), member.accountId, member.userId);
}
