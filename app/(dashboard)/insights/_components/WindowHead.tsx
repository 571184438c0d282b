import { INSIGHTS_RANGES } from '@/lib/dashboard/insights';

/** What both insights pages show above their content: a bad window's error, a line of context, and the range presets. */
export function WindowHead({
  path,
  range,
  error,
  query = '',
  children,
}: {
  path: string;
  range: string | null;
  error: string | null;
  query?: string;
  children: React.ReactNode;
}) {
  return (
    <>
      {error && (
        <p className="error" role="alert">
          {error} Showing the last 30 days.
        </p>
      )}
      <div className="chart-head">
        <p className="muted" style={{ margin: 0 }}>
          {children}
        </p>
        <nav className="segmented" aria-label="Range">
          {INSIGHTS_RANGES.map((r) => (
            <a key={r} href={`${path}?range=${r}${query}`} aria-current={range === r ? 'true' : undefined}>
              {r === '365' ? '1 year' : `${r} days`}
            </a>
          ))}
        </nav>
      </div>
    </>
  );
}
