// Rating curves: mu over games with a band of +-sigma, one line per player
// (tournaments, arenas and agents share it).
import { el } from './common.js';

const PALETTE = ['#1d4e89', '#d1495b', '#2a9d8f', '#d98e04', '#5b5ea6', '#6a994e', '#8d5a97', '#3d7ec8'];
const DASHES = ['', '6 3', '2 3', '8 3 2 3', '1 2', '10 4', '4 4', '3 1'];

// A name an agent chose, as text inside the SVG markup below (never markup).
const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const text = (s) => String(s).replace(/[&<>"']/g, (c) => ESCAPES[c]);

export function chart(history, names) {
  const entries = Object.entries(history);
  const longest = Math.max(2, ...entries.map(([, h]) => h.length));
  const values = entries.flatMap(([, h]) => h.flatMap(([mu, s]) => [mu - s, mu + s]));
  const lo = Math.min(...values, 20);
  const hi = Math.max(...values, 30);
  const W = 640; const H = 220; const P = 30;
  const x = (i) => P + (i / (longest - 1)) * (W - 2 * P);
  const y = (v) => H - P - ((v - lo) / (hi - lo)) * (H - 2 * P);
  let body = `<line x1="${P}" y1="${H - P}" x2="${W - P}" y2="${H - P}" stroke="#aaa"/>`
    + `<text x="${P}" y="${H - 8}" font-size="11">games →</text>`
    + `<text x="2" y="${y(hi) + 4}" font-size="10">${hi.toFixed(0)}</text><text x="2" y="${y(lo)}" font-size="10">${lo.toFixed(0)}</text>`;
  entries.forEach(([entrant, h], k) => {
    const c = PALETTE[k % PALETTE.length];
    const band = h.map(([mu, s], i) => `${x(i)},${y(mu + s)}`).concat(h.slice().reverse().map(([mu, s], i) => `${x(h.length - 1 - i)},${y(mu - s)}`)).join(' ');
    body += `<polygon points="${band}" fill="${c}" opacity="0.12"/>`;
    body += `<polyline points="${h.map(([mu], i) => `${x(i)},${y(mu)}`).join(' ')}" fill="none" stroke="${c}" stroke-width="2" stroke-dasharray="${DASHES[k % DASHES.length]}"><title>${text(names[entrant] || entrant)}</title></polyline>`;
  });
  const svg = el('div', { id: 'ratings' });
  svg.innerHTML = `<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="rating over games">${body}</svg>`;
  const legend = el('p', { class: 'legend' }, ...entries.map(([entrant], k) => el('span', { style: `color:${PALETTE[k % PALETTE.length]}` },
    `${['━', '╍', '┅', '━·', '┈', '━ ', '╌', '┄'][k % 8]} ${names[entrant] || entrant}`)));
  return [svg, legend];
}
