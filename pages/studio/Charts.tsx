// Server-rendered SVG charts: no JavaScript, readable on a phone (the SVG
// scales to the width; the numbers are in the table under each chart).

export interface Series {
  label: string;
  color: string;
  values: number[];
}

// StackedBars draws one stacked bar per period; negative parts are not
// drawn (the table carries them).
export function StackedBars({ title, labels, series, format }: { title: string; labels: string[]; series: Series[]; format: (n: number) => string }) {
  const n = labels.length;
  const totals = labels.map((_, i) => series.reduce((s, x) => s + Math.max(0, x.values[i] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const W = 600, H = 220, padL = 8, padB = 22, padT = 14;
  const bw = (W - padL * 2) / Math.max(1, n);
  const scale = (v: number) => ((H - padB - padT) * v) / max;
  const step = Math.max(1, Math.ceil(n / 8));
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title + ": peak " + format(max)} preserveAspectRatio="none">
        <line x1={padL} x2={W - padL} y1={H - padB} y2={H - padB} stroke="#d1d5db" />
        <text x={padL} y={11} className="chart-axis">{format(max)}</text>
        {labels.map((label, i) => {
          let y = H - padB;
          return (
            <g key={label}>
              {series.map((s) => {
                const v = Math.max(0, s.values[i] ?? 0);
                const h = scale(v);
                y -= h;
                return h > 0 ? <rect key={s.label} x={padL + i * bw + bw * 0.15} y={y} width={bw * 0.7} height={h} fill={s.color} /> : null;
              })}
              {i % step === 0 && (
                <text x={padL + i * bw + bw / 2} y={H - 6} textAnchor="middle" className="chart-axis">{label.slice(5)}</text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption className="chart-legend">
        {series.map((s) => (
          <span key={s.label}><i style={{ background: s.color }} /> {s.label}</span>
        ))}
      </figcaption>
    </figure>
  );
}

// HBars draws one horizontal bar per row (counts by status, attendance).
export function HBars({ title, rows }: { title: string; rows: { label: string; value: number }[] }) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  const H = 24 * rows.length + 4;
  return (
    <figure className="chart">
      <svg viewBox={`0 0 600 ${H}`} role="img" aria-label={title}>
        {rows.map((r, i) => (
          <g key={r.label}>
            <text x={0} y={i * 24 + 16} className="chart-axis">{r.label}</text>
            <rect x={170} y={i * 24 + 4} width={Math.max(r.value > 0 ? 2 : 0, (380 * r.value) / max)} height={16} fill="#7c3aed" />
            <text x={176 + (380 * r.value) / max} y={i * 24 + 16} className="chart-axis">{r.value}</text>
          </g>
        ))}
      </svg>
    </figure>
  );
}
