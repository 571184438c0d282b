import type { ImportProgress } from '../imports/service';

type Out = { isTTY?: boolean; columns?: number; write(s: string): boolean };

const PHASES: Record<ImportProgress['phase'], string> = {
  reading: 'reading',
  checking: 'checking references',
  writing: 'writing records',
  statistics: 'refreshing statistics',
  done: 'done',
};

const clock = (seconds: number) => {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(h ? 2 : 1, '0');
  return `${h ? `${h}:` : ''}${mm}:${String(s % 60).padStart(2, '0')}`;
};

/** One status line of the import on a terminal: phase, bar, records, rate and time left. */
export function importStatusLine(p: ImportProgress, width: number): string {
  const seconds = p.elapsedMs / 1000;
  const rate = seconds > 0 ? Math.round(p.records / seconds) : 0;
  if (p.phase !== 'reading') {
    return `import: ${PHASES[p.phase]}… ${p.records.toLocaleString('en')} records, ${clock(seconds)} elapsed`.slice(0, width - 1);
  }
  const left = p.fraction > 0.01 ? clock((seconds / p.fraction) * (1 - p.fraction)) : '?';
  const tail = ` ${Math.floor(p.fraction * 100)
    .toString()
    .padStart(3)}% ${p.records.toLocaleString('en')} records ${rate.toLocaleString('en')}/s left ${left}`;
  const barWidth = Math.max(10, Math.min(40, width - tail.length - 12));
  const full = Math.round(p.fraction * barWidth);
  return `import [${'█'.repeat(full)}${'░'.repeat(barWidth - full)}]${tail}`.slice(0, width - 1);
}

/**
 * Progress of an import on stderr: on a terminal, one line redrawn in place (at most 10 times a
 * second); otherwise the plain progress lines only, so logs and pipes stay readable. Stdout is
 * never touched (the CLI prints one JSON object there).
 */
export function importProgressReporter(out: Out = process.stderr): (p: ImportProgress) => void {
  if (!out.isTTY)
    return (p) => {
      if (p.message) out.write(`${p.message}\n`);
    };
  let last = 0;
  let drawn = false;
  return (p) => {
    const now = Date.now();
    if (p.phase === 'done') {
      if (drawn) out.write('\r\x1b[K');
      if (p.message) out.write(`${p.message}\n`);
      return;
    }
    if (!p.message && now - last < 100) return;
    last = now;
    drawn = true;
    out.write(`\r\x1b[K${importStatusLine(p, out.columns ?? 80)}`);
  };
}
