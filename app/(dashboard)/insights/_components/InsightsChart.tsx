'use client';
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const COLORS = ['#4c6ef5', '#e8590c'];
const FORMAT: Record<string, (v: number) => string> = {
  count: (v) => v.toLocaleString('en'),
  share: (v) => `${Math.round(v * 100)}%`,
  seconds: (v) => (v < 120 ? `${Math.round(v)}s` : v < 7200 ? `${Math.round(v / 60)}m` : `${Math.round(v / 3600)}h`),
  rating: (v) => v.toFixed(1),
};

/** One figure per UTC day, drawn with uPlot (canvas); the figure's text beside it is what assistive technology reads. */
export function InsightsChart({
  dates,
  series,
  unit,
  label,
}: {
  dates: string[];
  series: Array<{ label: string; values: Array<number | null> }>;
  unit: 'count' | 'share' | 'seconds' | 'rating';
  label: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = dates.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const fmt = FORMAT[unit]!;
    const plot = new uPlot(
      {
        width: el.clientWidth,
        height: 140,
        legend: { show: series.length > 1 },
        cursor: { y: false },
        scales: {
          x: { time: true },
          y: { range: (_u, min, max) => [0, unit === 'share' ? 1 : unit === 'rating' ? 5 : Math.max(unit === 'seconds' ? 60 : 1, max ?? min)] },
        },
        axes: [
          { size: 28, font: '11px system-ui', stroke: '#666' },
          { size: 44, font: '11px system-ui', stroke: '#666', values: (_u, ticks) => ticks.map(fmt) },
        ],
        series: [
          { value: (_u, v) => (v == null ? '' : new Date(v * 1000).toISOString().slice(0, 10)) },
          ...series.map((s, i) => ({
            label: s.label,
            stroke: COLORS[i % COLORS.length],
            width: 2,
            points: { show: dates.length <= 31 },
            spanGaps: false,
            value: (_u: uPlot, v: number | null) => (v == null ? '—' : fmt(v)),
          })),
        ],
      },
      [xs, ...series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: 140 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [dates, series, unit]);
  return <div ref={box} className="insights-chart" role="img" aria-label={label} />;
}
