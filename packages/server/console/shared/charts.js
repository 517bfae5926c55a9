// @ts-check
/**
 * The console's charts, as inline SVG: a queue's sparkline and the queue page's line charts.
 *
 * @import { Sparkline } from '../../src/server/console-api.ts'
 * @import { QueueSample } from '../../src/store/contract.ts'
 */
import { h, s } from './dom.js';
import { formatAge, formatTime } from './format.js';

/**
 * One line of a chart: what it shows of each sample, in which colour.
 * @typedef {{ label: string, color: string, value: (sample: QueueSample) => number }} Series
 */

/**
 * A queue's visible messages over its recent life (the overview's `sparkline`), as a small SVG.
 * @param {Sparkline} line
 * @param {string} name
 */
export function sparkline(line, name) {
  const width = 120;
  const height = 28;
  const values = line.visible;
  const max = Math.max(1, ...values);
  /** @param {number} i */
  const x = (i) => (values.length > 1 ? 2 + (i / (values.length - 1)) * (width - 4) : width - 2);
  /** @param {number} v */
  const y = (v) => height - 3 - (v / max) * (height - 6);
  const points = values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`);
  const span = line.spanSeconds > 0 ? `over the last ${formatAge(line.spanSeconds)}` : 'now';
  const label = `visible messages of ${name} ${span}: ${values[0]} → ${values.at(-1)}, highest ${max}`;
  const last = values.length - 1;
  return s(
    'svg',
    {
      class: 'sparkline',
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: 'img',
      'aria-label': label,
    },
    s('title', {}, label),
    s('polygon', {
      points: [`${x(0).toFixed(1)},${y(0)}`, ...points, `${x(last).toFixed(1)},${y(0)}`].join(' '),
      fill: '#dbe8f6',
    }),
    s('polyline', { points: points.join(' '), fill: 'none', stroke: '#0b5cad', 'stroke-width': 1.5 }),
    s('circle', { cx: x(last).toFixed(1), cy: y(values[last] ?? 0).toFixed(1), r: 2, fill: '#0b5cad' }),
  );
}

/**
 * A line chart of several series over the samples' times, as inline SVG.
 * @param {string} title
 * @param {QueueSample[]} samples
 * @param {Series[]} series
 */
export function lineChart(title, samples, series) {
  const width = 520;
  const height = 170;
  const pad = { left: 44, right: 8, top: 10, bottom: 22 };
  // Rates below 1 a second get their own scale; an all-zero chart keeps 0 to 1.
  const max = Math.max(0, ...series.flatMap((line) => samples.map(line.value))) || 1;
  const t0 = samples[0]?.at ?? 0;
  const t1 = samples.at(-1)?.at ?? 1;
  /** @param {number} t */
  const x = (t) => pad.left + ((t - t0) / Math.max(1, t1 - t0)) * (width - pad.left - pad.right);
  /** @param {number} v */
  const y = (v) => height - pad.bottom - (v / max) * (height - pad.top - pad.bottom);
  const top = Number.isInteger(max) ? String(max) : max.toFixed(2);
  const svg = s(
    'svg',
    { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title },
    s('title', {}, title),
    s('line', { x1: pad.left, y1: y(0), x2: width - pad.right, y2: y(0), stroke: '#a9b4c2' }),
    s('text', { x: 4, y: y(max) + 4, 'font-size': 11, fill: '#5b6675' }, top),
    s('text', { x: 4, y: y(0), 'font-size': 11, fill: '#5b6675' }, '0'),
  );
  if (samples.length > 0) {
    svg.append(
      s('text', { x: pad.left, y: height - 6, 'font-size': 11, fill: '#5b6675' }, formatTime(t0).slice(11)),
      s(
        'text',
        { x: width - pad.right - 64, y: height - 6, 'font-size': 11, fill: '#5b6675' },
        formatTime(t1).slice(11),
      ),
    );
  }
  for (const line of series) {
    const points = samples.map((sample) => `${x(sample.at).toFixed(1)},${y(line.value(sample)).toFixed(1)}`);
    if (points.length > 0)
      svg.append(
        s('polyline', { points: points.join(' '), fill: 'none', stroke: line.color, 'stroke-width': 1.8 }),
      );
  }
  return h(
    'figure',
    { class: 'chart' },
    h('figcaption', {}, title),
    svg,
    h(
      'div',
      { class: 'legend' },
      series.map((line) => h('span', { style: `color:${line.color}` }, `■ ${line.label}`)),
    ),
    samples.length === 0 ? h('p', { class: 'muted' }, 'No samples yet (one every 10 s).') : '',
  );
}
