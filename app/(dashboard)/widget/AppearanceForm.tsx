'use client';
import { useActionState, useState, type CSSProperties } from 'react';
import { featuresOf } from '@/lib/widget-releases/features';
import { Appearance, APPEARANCE_LABELS, MAX_HANDOFF_BUTTON_TEXT, MAX_RADIUS_PX } from '@/lib/widget-clients/appearance';
import { saveAppearanceAction } from './actions';
import styles from './appearance.module.css';

type Field = keyof typeof APPEARANCE_LABELS;
/** The widget's words when none are set (lib/widget/handoff.ts HANDOFF_TEXT). */
const HANDOFF_DEFAULT = 'Talk to a person';
type Draft = Record<Field, string>;

const HINTS: Partial<Record<Field, string>> = {
  header_icon_url: 'An https:// image address.',
  default_questions: 'One per line, at most 6.',
  primary_color: '#3b5bdb, rgb(…) or hsl(…)',
  background_color: '#ffffff, rgb(…) or hsl(…)',
  font: 'Family names, e.g. Georgia, serif',
  corner_radius: `Pixels, 0 to ${MAX_RADIUS_PX}.`,
  handoff_button_text: `Shown on "Talk to a person" (under a declined answer, after a Dislike, in the menu). At most ${MAX_HANDOFF_BUTTON_TEXT} characters.`,
};

function draftOf(a: Appearance): Draft {
  const d = Object.fromEntries(Object.keys(APPEARANCE_LABELS).map((k) => [k, ''])) as Draft;
  for (const [k, v] of Object.entries(a)) d[k as Field] = Array.isArray(v) ? v.join('\n') : String(v ?? '');
  return d;
}

/** The value the widget would apply for a field, or undefined while what is typed is not valid. */
function valid<F extends Field>(draft: Draft, field: F): Appearance[F] | undefined {
  const r = Appearance.shape[field].safeParse(draft[field]);
  return r.success ? (r.data as Appearance[F]) : undefined;
}

/** The widget as it will look, from what is typed (fields that are not valid yet show the default). */
function Preview({ draft }: { draft: Draft }) {
  const primary = valid(draft, 'primary_color') ?? '#3b5bdb';
  const bot = valid(draft, 'bot_name');
  const name = valid(draft, 'header_name') || bot || 'Chat';
  const icon = valid(draft, 'header_icon_url');
  const title = valid(draft, 'welcome_title');
  const text = valid(draft, 'welcome_text');
  const questions = valid(draft, 'default_questions') ?? [];
  const radius = valid(draft, 'corner_radius');
  const handoff = valid(draft, 'handoff_button_text') || HANDOFF_DEFAULT;
  const box: CSSProperties = {
    background: valid(draft, 'background_color') ?? '#ffffff',
    fontFamily: valid(draft, 'font') ?? undefined,
    borderRadius: radius === undefined ? 14 : radius,
  };
  return (
    <div className={styles.preview} role="region" aria-label="Preview">
      <div className={styles.widget} style={box}>
        <div className={styles.header} style={{ background: primary }}>
          {icon && <img src={icon} alt="" width={28} height={28} />}
          <span>{name}</span>
        </div>
        <div className={styles.log}>
          <div className={styles.welcome}>
            {title && <strong>{title}</strong>}
            <p>{text || (title ? '' : `Hi! Ask ${bot ?? 'us'} anything.`)}</p>
            {questions.length > 0 && (
              <div className={styles.chips}>
                {questions.map((q) => (
                  <span key={q} style={{ borderColor: primary, color: primary }}>
                    {q}
                  </span>
                ))}
              </div>
            )}
          </div>
          <div className={styles.user} style={{ background: primary }}>
            Do you deliver on Sundays?
          </div>
          <div className={styles.bot}>
            Sorry, I don&apos;t know that yet.
            <span className={styles.handoff} style={{ borderColor: primary, color: primary }}>
              {handoff}
            </span>
          </div>
        </div>
        <div className={styles.input}>
          <span>Type your question…</span>
          <span className={styles.send} style={{ background: primary }}>
            Send
          </span>
        </div>
      </div>
    </div>
  );
}

/** One client's appearance: the form, and beside it the preview that follows every keystroke. */
function ClientAppearance({ clientId, saved }: { clientId: string; saved: Appearance }) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(saved));
  const [state, action, pending] = useActionState(saveAppearanceAction, null);
  const input = (field: Field, multiline = false) => {
    const id = `ap-${field}`;
    const hint = HINTS[field];
    const common = {
      id,
      name: field,
      value: draft[field],
      'aria-describedby': hint ? `${id}-hint` : undefined,
      onChange: (e: { target: { value: string } }) => setDraft((d) => ({ ...d, [field]: e.target.value })),
    };
    return (
      <div className="field" key={field}>
        <label htmlFor={id}>{APPEARANCE_LABELS[field]}</label>
        {multiline ? <textarea rows={3} {...common} /> : <input type="text" {...common} />}
        {hint && (
          <p id={`${id}-hint`} className={styles.hint}>
            {hint}
          </p>
        )}
      </div>
    );
  };
  return (
    <div className={styles.layout}>
      <form action={action} className={styles.form}>
        <input type="hidden" name="clientId" value={clientId} />
        <div className={styles.grid}>
          {input('bot_name')}
          {input('header_name')}
          {input('header_icon_url')}
          {input('welcome_title')}
        </div>
        {input('welcome_text', true)}
        {input('default_questions', true)}
        <div className={styles.grid}>
          {input('primary_color')}
          {input('background_color')}
          {input('font')}
          {input('corner_radius')}
        </div>
        {input('handoff_button_text')}
        <button className="btn" type="submit" disabled={pending}>
          {pending ? 'Saving…' : 'Save appearance'}
        </button>
        {state && !state.ok && (
          <p className="error" role="alert" style={{ marginTop: '.75rem' }}>
            {state.error}
          </p>
        )}
        {state?.ok && (
          <p className={styles.saved} role="status">
            Saved. Widgets apply it when their page next loads (within a minute).
          </p>
        )}
      </form>
      <Preview draft={draft} />
    </div>
  );
}

/** Section "Appearance" (docs/contracts.md §16), for the client selected in the workspace. */
export function AppearanceSection({
  clients,
  clientId,
  onClientChange,
  tracks,
}: {
  clients: Array<{ id: string; name: string; appearance: Appearance }>;
  clientId: string;
  onClientChange: (id: string) => void;
  tracks: Record<string, string>;
}) {
  const without = Object.entries(tracks).filter(([, v]) => featuresOf(v).lacks.some((f) => f.key === 'appearance'));
  const client = clients.find((c) => c.id === clientId) ?? clients[0];
  if (!client) return null;
  return (
    <section className="panel" aria-labelledby="appearance-heading">
      <h2 id="appearance-heading" style={{ marginTop: 0 }}>
        Appearance
      </h2>
      <p className="muted">
        How the widget of a client looks and what it says. Options in the page&apos;s <code>window.svcAIConfig</code> still win.
      </p>
      {without.length > 0 && (
        <p className="notice" role="note" data-testid="appearance-versions">
          The saved appearance and &quot;Talk to a person&quot; reach widgets 2.1 and later: not the{' '}
          {without.map(([t, v]) => `${t} track (${v})`).join(' or the ')}.
        </p>
      )}
      <div className="field" style={{ maxWidth: 360 }}>
        <label htmlFor="appearance-client">Appearance of client</label>
        <select id="appearance-client" value={client.id} onChange={(e) => onClientChange(e.target.value)}>
          {clients.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </div>
      <ClientAppearance key={client.id} clientId={client.id} saved={client.appearance} />
    </section>
  );
}
