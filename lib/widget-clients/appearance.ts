import { z } from 'zod';

/**
 * A widget client's look and words (docs/contracts.md §16 "appearance"). Everything here is
 * rendered on customers' pages, so every field is closed: texts are plain text (the widget sets
 * them as text nodes), colours, font and radius are whole values from narrow patterns (never a
 * fragment of CSS), the icon an https address. Pure zod: the dashboard's preview parses with it too.
 */

/** Control characters other than a line break; a stored text is shown as typed, never as markup. */
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f]/;

const blankToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : typeof v === 'string' ? v.trim() : v);

const text = (max: number, lines = false) =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .max(max, `at most ${max} characters`)
      .refine((s) => !CONTROL.test(s) && (lines || !s.includes('\n')), lines ? 'must not contain control characters' : 'must be one line of plain text')
      .optional(),
  );

const HEX = /^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;
const NUM = String.raw`\d{1,3}(?:\.\d+)?%?`;
const ALPHA = String.raw`(?:\s*,\s*(?:0|1|0?\.\d+|\d{1,3}%))?`;
const RGB = new RegExp(String.raw`^rgba?\(\s*${NUM}\s*,\s*${NUM}\s*,\s*${NUM}${ALPHA}\s*\)$`, 'i');
const HSL = new RegExp(String.raw`^hsla?\(\s*\d{1,3}(?:deg)?\s*,\s*${NUM}\s*,\s*${NUM}${ALPHA}\s*\)$`, 'i');

/** A CSS colour in a closed form: #rgb, #rrggbb (with or without alpha), rgb()/rgba() or hsl()/hsla() with numbers. */
export const isCssColour = (s: string) => HEX.test(s) || RGB.test(s) || HSL.test(s);

const colour = z.preprocess(
  blankToUndefined,
  z.string().max(40, 'at most 40 characters').refine(isCssColour, 'must be a CSS colour: #rgb, #rrggbb, rgb(…) or hsl(…)').optional(),
);

/** Font family names: letters, digits, spaces and hyphens, optionally quoted, separated by commas. */
export const FONT_PATTERN = /^\s*(?:"[\w -]{1,40}"|'[\w -]{1,40}'|[A-Za-z][\w -]{0,39})(?:\s*,\s*(?:"[\w -]{1,40}"|'[\w -]{1,40}'|[A-Za-z][\w -]{0,39}))*\s*$/;

const font = z.preprocess(
  blankToUndefined,
  z
    .string()
    .max(120, 'at most 120 characters')
    .regex(FONT_PATTERN, 'must be font family names separated by commas (letters, digits, spaces, hyphens), e.g. Georgia, serif')
    .optional(),
);

export const MAX_RADIUS_PX = 32;

const radius = z.preprocess((v) => {
  const b = blankToUndefined(v);
  if (typeof b !== 'string') return b;
  return /^\d{1,3}(?:px)?$/.test(b) ? Number.parseInt(b, 10) : b;
}, z
  .int(`must be a whole number of pixels from 0 to ${MAX_RADIUS_PX}`)
  .min(0, `must be a whole number of pixels from 0 to ${MAX_RADIUS_PX}`)
  .max(MAX_RADIUS_PX, `must be a whole number of pixels from 0 to ${MAX_RADIUS_PX}`)
  .optional());

const httpsUrl = z.preprocess(
  blankToUndefined,
  z
    .string()
    .max(500, 'at most 500 characters')
    .transform((s, ctx) => {
      let u: URL | null = null;
      try {
        u = new URL(s);
      } catch {
        /* reported below */
      }
      if (u?.protocol !== 'https:' || u.username || u.password || !/^https:\/\//i.test(s)) {
        ctx.addIssue({ code: 'custom', message: 'must be an https:// address of an image' });
        return z.NEVER;
      }
      return u.href;
    })
    .optional(),
);

/** The handoff button's words: one short line, and no angle brackets (a button's words are never markup). */
export const MAX_HANDOFF_BUTTON_TEXT = 40;
const buttonText = z.preprocess(
  blankToUndefined,
  z
    .string()
    .max(MAX_HANDOFF_BUTTON_TEXT, `at most ${MAX_HANDOFF_BUTTON_TEXT} characters`)
    .refine((s) => !CONTROL.test(s) && !s.includes('\n') && !/[<>]/.test(s), 'must be one line of plain text, without < or >')
    .optional(),
);

export const MAX_DEFAULT_QUESTIONS = 6;

/** One question per line (the textbox's form) or a list; blank lines dropped. */
const questions = z.preprocess(
  (v) => {
    const list = typeof v === 'string' ? v.split('\n') : v;
    if (!Array.isArray(list)) return list;
    const kept = list.map((q) => (typeof q === 'string' ? q.trim() : q)).filter((q) => q !== '');
    return kept.length ? kept : undefined;
  },
  z
    .array(
      z
        .string()
        .max(120, 'each question at most 120 characters')
        .regex(/^[^\u0000-\u001f\u007f]*$/, 'must be plain text'),
    )
    .max(MAX_DEFAULT_QUESTIONS, `at most ${MAX_DEFAULT_QUESTIONS} questions`)
    .optional(),
);

export const Appearance = z
  .object({
    bot_name: text(40),
    header_name: text(60),
    header_icon_url: httpsUrl,
    welcome_title: text(80),
    welcome_text: text(400, true),
    default_questions: questions,
    primary_color: colour,
    background_color: colour,
    font,
    corner_radius: radius,
    /** The words of the "Talk to a person" buttons (docs/contracts.md §14); their accessible name keeps "talk to a person". */
    handoff_button_text: buttonText,
  })
  .strict()
  .meta({ id: 'WidgetAppearance' });
export type Appearance = z.infer<typeof Appearance>;

/** The dashboard's field names (the labels of docs/contracts.md §16), for messages that name what was typed. */
export const APPEARANCE_LABELS: Record<keyof Appearance, string> = {
  bot_name: 'Bot name',
  header_name: 'Header name',
  header_icon_url: 'Header icon URL',
  welcome_title: 'Welcome title',
  welcome_text: 'Welcome text',
  default_questions: 'Default questions',
  primary_color: 'Primary colour',
  background_color: 'Background colour',
  font: 'Font',
  corner_radius: 'Corner radius',
  handoff_button_text: 'Handoff button text',
};

/** A stored appearance as served: what no longer parses (a rule tightened since) is left out, never served. */
export function storedAppearance(raw: unknown): Appearance {
  if (!raw || typeof raw !== 'object') return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    const field = Appearance.shape[k as keyof Appearance];
    if (!field) continue;
    const r = field.safeParse(v);
    if (r.success && r.data !== undefined) out[k] = r.data;
  }
  return out as Appearance;
}
