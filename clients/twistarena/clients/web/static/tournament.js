// /tournaments/ID: standings with confidence intervals, ratings over games, progress, games.
import { chart } from './charts.js';
import { badge, el, every, getJSON, link, main } from './common.js';

const tid = document.body.dataset.tournament;
let running = true;

function ciBar(low, high, point, lo, hi) {
  const scale = (v) => `${((v - lo) / (hi - lo || 1)) * 100}%`;
  return el('span', { class: 'ci', title: `${low.toFixed(3)} .. ${high.toFixed(3)}` },
    Object.assign(el('span', { style: `left:${scale(low)};width:calc(${scale(high)} - ${scale(low)})` })),
    el('i', { style: `left:${scale(point)}` }));
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
