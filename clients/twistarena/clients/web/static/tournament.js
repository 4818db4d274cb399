// /tournaments/ID: standings with confidence intervals, ratings over games, progress, games.
import { badge, el, every, getJSON, link, main } from './common.js';

const tid = document.body.dataset.tournament;
let running = true;
const PALETTE = ['#1d4e89', '#d1495b', '#2a9d8f', '#d98e04', '#5b5ea6', '#6a994e', '#8d5a97', '#3d7ec8'];
const DASHES = ['', '6 3', '2 3', '8 3 2 3', '1 2', '10 4', '4 4', '3 1'];

function ciBar(low, high, point, lo, hi) {
  const scale = (v) => `${((v - lo) / (hi - lo || 1)) * 100}%`;
  return el('span', { class: 'ci', title: `${low.toFixed(3)} .. ${high.toFixed(3)}` },
    Object.assign(el('span', { style: `left:${scale(low)};width:calc(${scale(high)} - ${scale(low)})` })),
    el('i', { style: `left:${scale(point)}` }));
}

function chart(history, names) {
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
    body += `<polyline points="${h.map(([mu], i) => `${x(i)},${y(mu)}`).join(' ')}" fill="none" stroke="${c}" stroke-width="2" stroke-dasharray="${DASHES[k % DASHES.length]}"><title>${names[entrant] || entrant}</title></polyline>`;
  });
  const svg = el('div', { id: 'ratings' });
  svg.innerHTML = `<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="rating over games">${body}</svg>`;
  const legend = el('p', { class: 'legend' }, ...entries.map(([entrant], k) => el('span', { style: `color:${PALETTE[k % PALETTE.length]}` },
    `${['━', '╍', '┅', '━·', '┈', '━ ', '╌', '┄'][k % 8]} ${names[entrant] || entrant}`)));
  return [svg, legend];
}

every(2000, async () => {
  const t = await getJSON(`/api/tournaments/${encodeURIComponent(tid)}`);
  running = t.status === 'running';
  const names = Object.fromEntries(t.entrants.map((e) => [e.entrant, e.name]));
  const standings = el('table', { class: 'grid', id: 'standings' },
    el('tr', {}, ...['#', 'entrant', 'games', 'wins', 'win share (95% CI)', 'mean score (95% CI)', 'mean place', 'rating μ ± σ'].map((h) => el('th', {}, h))));
  const scores = t.standings.flatMap((r) => r.score_ci);
  const sLo = Math.min(...scores, 0); const sHi = Math.max(...scores, 1);
  t.standings.forEach((r, i) => standings.append(el('tr', { 'data-entrant': r.entrant },
    el('td', { class: 'num' }, String(i + 1)), el('td', {}, r.name), el('td', { class: 'num' }, String(r.games)),
    el('td', { class: 'num' }, r.wins.toFixed(1)),
    el('td', {}, ciBar(r.win_ci[0], r.win_ci[1], r.win_share, 0, 1), `${r.win_share.toFixed(2)} (${r.win_ci[0].toFixed(2)}–${r.win_ci[1].toFixed(2)})`),
    el('td', {}, ciBar(r.score_ci[0], r.score_ci[1], r.mean_score, sLo, sHi), `${r.mean_score.toFixed(1)} (${r.score_ci[0].toFixed(1)}–${r.score_ci[1].toFixed(1)})`),
    el('td', { class: 'num' }, r.mean_place.toFixed(2)), el('td', { class: 'num' }, `${r.mu.toFixed(1)} ± ${r.sigma.toFixed(1)}`))));
  const pct = t.games_planned ? (100 * t.games_done) / t.games_planned : 0;
  const games = el('table', { class: 'grid', id: 'games' },
    el('tr', {}, ...['round', 'table', 'deal', 'seats', 'places', 'match'].map((h) => el('th', {}, h))));
  t.games.forEach((g) => games.append(el('tr', {}, el('td', { class: 'num' }, String(g.round)), el('td', { class: 'num' }, String(g.table)),
    el('td', { class: 'num' }, String(g.deal)), el('td', {}, g.seats.join(', ')), el('td', {}, g.places.join(', ') || '…'),
    el('td', {}, g.match_id ? link(`/matches/${g.match_id}`, g.match_id) : '—'))));
  main().replaceChildren(
    el('h1', {}, `Tournament ${t.tournament_id} `, badge(t.status)),
    el('p', { class: 'muted' }, `${t.game_id}, ${t.num_players} players per table, ${t.format}${t.duplicate ? ', duplicate deals' : ''} · `, link(`/rules/${t.game_id}`, 'rules')),
    el('div', { class: 'progress', title: `${t.games_done}/${t.games_planned}` }, el('span', { style: `width:${pct}%` })),
    el('p', { class: 'muted', id: 'progress' }, `${t.games_done} of ${t.games_planned} games played`),
    el('h2', {}, 'Standings'), standings,
    el('h2', {}, 'Rating over games (μ, band ± σ)'), ...chart(t.ratings, names),
    el('h2', {}, 'Games'), games);
  document.body.dataset.loaded = String(Date.now());
}, () => running);
