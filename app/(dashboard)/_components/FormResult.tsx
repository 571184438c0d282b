import type { CSSProperties, ReactNode } from 'react';

/** A form action's answer: ok, or the error to show. */
type FormState = { ok: boolean; error?: string } | null | undefined;

/** An action's error, announced to screen readers; `inline` beside buttons, else a paragraph. */
export function FormError({ error, inline = false, style }: { error: string | null | undefined; inline?: boolean; style?: CSSProperties }) {
  if (!error) return null;
  const Tag = inline ? 'span' : 'p';
  return (
    <Tag className="error" role="alert" style={style}>
      {error}
    </Tag>
  );
}

/** What a form's action answered, under the form: its error, or `saved` (when given) once it succeeded. */
export function FormResult({ state, saved, style }: { state: FormState; saved?: ReactNode; style?: CSSProperties }) {
  if (state && !state.ok) return <FormError error={state.error} style={style} />;
  if (!state?.ok || saved == null) return null;
  return (
    <p className="success" role="status" style={style}>
      {saved}
    </p>
  );
}
