// A uPlot chart of one or more series over time; resizes with its container.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series { label: string; values: number[]; color: string }

export function TimeChart({ title, times, series, bars }: { title: string; times: number[]; series: Series[]; bars?: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const width = () => Math.max(280, el.clientWidth);
    const dark = document.documentElement.dataset.theme === 'dark' || (document.documentElement.dataset.theme !== 'light' && matchMedia('(prefers-color-scheme: dark)').matches);
    const axisColor = dark ? '#c9d1d9' : '#24292f';
    const grid = { stroke: dark ? '#30363d' : '#d0d7de', width: 1 };
    const step = times.length > 1 ? (times[1]! - times[0]!) / 1000 : 3600;
    const plot = new uPlot({
      width: width(), height: 220, title,
      // Bars are centred on their bucket: half a bucket of room at each end keeps the last one whole.
      scales: { x: bars ? { time: true, range: (_u, min, max) => [min - step / 2, max + step / 2] } : { time: true } },
      axes: [{ stroke: axisColor, grid }, { stroke: axisColor, grid }],
      series: [{}, ...series.map((s) => ({
        label: s.label, stroke: s.color, width: 2, fill: bars ? `${s.color}55` : undefined,
        paths: bars ? uPlot.paths.bars!({ size: [0.6, 40] }) : undefined, points: { show: false },
      }))],
    }, [times.map((t) => t / 1000), ...series.map((s) => s.values)], el);
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    resize.observe(el);
    return () => { resize.disconnect(); plot.destroy(); };
  }, [title, JSON.stringify(times), JSON.stringify(series.map((s) => s.values)), bars]);
  return <div class="chart" ref={box} role="img" aria-label={`${title}: ${series.map((s) => `${s.label} ${s.values.reduce((a, b) => a + b, 0)}`).join(', ')}`} />;
}
