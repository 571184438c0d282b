/**
 * What each widget release can do that the dashboard's preview shows: the one table /widget reads
 * to say which features a track's or a pinned version's widget has. Pure (no fs), so client
 * components may import it.
 */
export const WIDGET_FEATURES = [
  { key: 'handoff', label: '"Talk to a person" (handoff)', since: '2.1.0' },
  { key: 'rating', label: 'Rating after "Resolve"', since: '2.1.0' },
  { key: 'comments', label: 'Comments after Like/Dislike', since: '2.1.0' },
  { key: 'appearance', label: 'Saved appearance', since: '2.1.0' },
  { key: 'history', label: 'History opens at the newest message', since: '2.1.0' },
  { key: 'handoff_text', label: 'Own handoff button text', since: '2.1.1' },
] as const;
export type WidgetFeature = (typeof WIDGET_FEATURES)[number];

const parts = (v: string) => v.split('.').map((n) => Number(n) || 0);

/** a >= b for X.Y.Z versions. */
function atLeast(a: string, b: string): boolean {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  return true;
}

/** The preview's features this exact version has and lacks, in the table's order. */
export function featuresOf(version: string): { has: WidgetFeature[]; lacks: WidgetFeature[] } {
  return {
    has: WIDGET_FEATURES.filter((f) => atLeast(version, f.since)),
    lacks: WIDGET_FEATURES.filter((f) => !atLeast(version, f.since)),
  };
}
