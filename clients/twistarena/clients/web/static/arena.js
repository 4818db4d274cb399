// /arenas/ID: the leaderboard (house rungs marked as anchors) and the rating
// curves of the top agents.
import { chart } from './charts.js';
import { ago, badge, el, every, getJSON, link, main } from './common.js';

const arenaId = document.body.dataset.arena;
const TOP = 8;
let axis = 'games';

every(3000, async () => {
  const data = await getJSON(`/api/arenas/${encodeURIComponent(arenaId)}`);
  const a = data.arena;
  const board = el('table', { class: 'grid', id: 'leaderboard' },
    el('tr', {}, ...['rank', 'agent', 'version', 'μ − 3σ', 'μ', 'σ', 'games', 'win share', 'last match'].map((h) => el('th', {}, h))));
  data.rows.forEach((r) => board.append(el('tr', { 'data-agent': r.agent_id, class: r.house ? 'house' : '' },
    el('td', { class: 'num' }, String(r.rank)),
    el('td', {}, r.house ? el('span', {}, r.name, ' ', el('span', { class: 'badge anchor' }, 'house anchor')) : link(`/agents/${r.agent_id}`, r.name)),
    el('td', { class: 'num' }, r.version ? `v${r.version}` : '—'),
    el('td', { class: 'num' }, r.conservative.toFixed(2)), el('td', { class: 'num' }, r.mu.toFixed(2)),
    el('td', { class: 'num' }, r.sigma.toFixed(2)), el('td', { class: 'num' }, String(r.games)),
    el('td', { class: 'num' }, `${(100 * r.win_share).toFixed(0)}%`),
    el('td', {}, r.last_match_id ? el('a', { href: `/matches/${r.last_match_id}` }, ago(r.last_match_at)) : '—'))));
  if (!data.rows.length) board.append(el('tr', {}, el('td', { colspan: '9', class: 'muted' }, 'no rated match yet')));
  const top = Object.fromEntries(Object.entries(data.ratings).slice(0, TOP));
  const toggle = el('select', { id: 'x-axis' }, ...['games', 'time'].map((v) => {
    const o = el('option', { value: v }, `x axis: ${v}`);
    if (v === axis) o.setAttribute('selected', '');
    return o;
  }));
  toggle.addEventListener('change', () => {
    axis = toggle.value;
    const [box, legend] = chart(top, data.names, axis);
    document.getElementById('ratings').replaceWith(box);
    document.querySelector('.legend').replaceWith(legend);
  });
  main().replaceChildren(
    el('h1', {}, `Arena ${a.arena_id} `, badge(a.status)),
    el('p', { class: 'muted' }, `${a.game}, ${a.num_players} players · ${a.enrolled} agents enrolled · ${a.matches_played} rated matches · `,
      `at most ${a.matches_per_minute} matches a minute, ${a.max_concurrent_per_agent} at once per agent · `, link(`/rules/${a.game_id}`, 'rules')),
    el('h2', {}, 'Leaderboard'), board,
    el('h2', {}, `Rating of the top ${Math.min(TOP, Object.keys(top).length)} (μ, band ± σ)`), toggle, ...chart(top, data.names, axis));
  document.body.dataset.loaded = String(Date.now());
});
