// Rating curves: mu over games (or over time, when points carry their end time
// as a third value) with a band of +-sigma, one line per player (tournaments,
// arenas and agents share it). Each player keeps its colour and dash whatever
// its rank: both follow from its key, not from its place in the list.
import { el } from './common.js';

const PALETTE = ['#1d4e89', '#d1495b', '#2a9d8f', '#d98e04', '#5b5ea6', '#6a994e', '#8d5a97', '#3d7ec8'];
const DASHES = ['', '6 3', '2 3', '8 3 2 3', '1 2', '10 4', '4 4', '3 1'];
const SVG = 'http://www.w3.org/2000/svg';

// The colour and dash of a player, from its key alone.
export function styleOf(key) {
  let h = 0;
  for (const ch of key) h = (h * 31 + ch.codePointAt(0)) >>> 0;
  return { colour: PALETTE[h % PALETTE.length], dash: DASHES[Math.floor(h / PALETTE.length) % DASHES.length] };
}

function node(tag, attrs, text) {
  const n = document.createElementNS(SVG, tag);
  Object.entries(attrs).forEach(([k, v]) => n.setAttribute(k, String(v)));
  if (text !== undefined) n.textContent = text;
  return n;
}

// Round tick values covering lo..hi (about five of them).
function ticks(lo, hi) {
  const raw = (hi - lo) / 5;
  const step = [1, 2, 5, 10].map((m) => m * 10 ** Math.floor(Math.log10(raw))).find((s) => s >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(v);
  return out;
}

// history: key -> [[mu, sigma(, ended ms)], ...]; names: key -> label;
// axis: 'games' or 'time' (the points' third value).
export function chart(history, names, axis = 'games') {
  const entries = Object.entries(history);
  const byTime = axis === 'time';
  const longest = Math.max(2, ...entries.map(([, h]) => h.length));
  const stamps = entries.flatMap(([, h]) => h.map((p) => p[2] || 0)).filter((t) => t > 0);
  const t0 = Math.min(...stamps); const t1 = Math.max(...stamps, t0 + 1000);
  const values = entries.flatMap(([, h]) => h.flatMap(([mu, s]) => [mu - s, mu + s]));
  const lo = Math.floor(Math.min(...values, 20)); const hi = Math.ceil(Math.max(...values, 30));
  const W = 640; const H = 240; const L = 44; const R = 12; const T = 10; const B = 34;
  const x = (i, p) => L + (byTime ? ((p[2] || t0) - t0) / (t1 - t0) : i / (longest - 1)) * (W - L - R);
  const y = (v) => H - B - ((v - lo) / (hi - lo)) * (H - T - B);
  const svg = node('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img', 'aria-label': `rating over ${byTime ? 'time' : 'games'}` });
  svg.append(node('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#888', class: 'y-axis' }));
  svg.append(node('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#888' }));
  ticks(lo, hi).forEach((v) => {
    svg.append(node('line', { x1: L, y1: y(v), x2: W - R, y2: y(v), stroke: '#eee' }));
    svg.append(node('text', { x: L - 4, y: y(v) + 4, 'font-size': 10, 'text-anchor': 'end', class: 'y-tick' }, String(v)));
  });
  svg.append(node('text', { x: 4, y: T + 8, 'font-size': 11 }, 'μ'));
  if (byTime) {
    [t0, (t0 + t1) / 2, t1].forEach((t) => svg.append(node('text', { x: L + ((t - t0) / (t1 - t0)) * (W - L - R), y: H - B + 14, 'font-size': 10, 'text-anchor': 'middle' },
      new Date(t).toISOString().slice(11, 19))));
  } else {
    ticks(0, longest - 1).filter((g) => Number.isInteger(g)).forEach((g) => svg.append(node('text', { x: x(g, []), y: H - B + 14, 'font-size': 10, 'text-anchor': 'middle' }, String(g))));
  }
  svg.append(node('text', { x: W - R, y: H - 4, 'font-size': 11, 'text-anchor': 'end' }, byTime ? 'time (UTC) →' : 'games →'));
  entries.forEach(([key, h]) => {
    const { colour, dash } = styleOf(key);
    const band = h.map((p, i) => `${x(i, p)},${y(p[0] + p[1])}`).concat(h.map((p, i) => `${x(i, p)},${y(p[0] - p[1])}`).reverse()).join(' ');
    svg.append(node('polygon', { points: band, fill: colour, opacity: 0.12 }));
    const line = node('polyline', { points: h.map((p, i) => `${x(i, p)},${y(p[0])}`).join(' '), fill: 'none', stroke: colour, 'stroke-width': 2, 'stroke-dasharray': dash, 'data-key': key });
    line.append(node('title', {}, names[key] || key));
    svg.append(line);
  });
  const box = el('div', { id: 'ratings' });
  box.append(svg);
  const legend = el('p', { class: 'legend' }, ...entries.map(([key]) => {
    const { colour, dash } = styleOf(key);
    const swatch = node('svg', { width: 28, height: 10 });
    swatch.append(node('line', { x1: 0, y1: 5, x2: 28, y2: 5, stroke: colour, 'stroke-width': 2, 'stroke-dasharray': dash }));
    return el('span', { class: 'legend-entry', 'data-key': key }, swatch, ` ${names[key] || key} `);
  }));
  return [box, legend];
}
