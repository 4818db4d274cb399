// /agents/ID: an agent's versions, its rating curve in each arena, its recent
// matches (linking to their replays) and its error and timeout counts.
import { chart } from './charts.js';
import { ago, el, every, getJSON, link, main, ratingOf } from './common.js';

const agentId = document.body.dataset.agent;

every(5000, async () => {
  const a = await getJSON(`/api/agents/${encodeURIComponent(agentId)}`);
  const ratings = el('table', { class: 'grid', id: 'ratings-table' },
    el('tr', {}, ...['arena', 'version', 'μ − 3σ', 'μ', 'σ', 'games', 'wins'].map((h) => el('th', {}, h))));
  a.ratings.forEach((r) => ratings.append(el('tr', { 'data-arena': r.arena_id, 'data-version': String(r.version) },
    el('td', {}, link(`/arenas/${r.arena_id}`, r.arena_id)), el('td', { class: 'num' }, `v${r.version}${r.current ? ' (on the board)' : ''}`),
    el('td', { class: 'num' }, (r.mu - 3 * r.sigma).toFixed(2)), el('td', { class: 'num' }, r.mu.toFixed(2)),
    el('td', { class: 'num' }, r.sigma.toFixed(2)), el('td', { class: 'num' }, String(r.games)), el('td', { class: 'num' }, String(r.wins)))));
  if (!a.ratings.length) ratings.append(el('tr', {}, el('td', { colspan: '7', class: 'muted' }, 'not rated in any arena yet')));
  const curves = [];
  [...new Set(a.ratings.map((r) => r.arena_id))].forEach((arena) => {
    const mine = a.ratings.filter((r) => r.arena_id === arena);
    curves.push(el('h3', {}, arena), ...chart(Object.fromEntries(mine.map((r) => [`v${r.version}`, r.history])), {}));
  });
  const versions = el('table', { class: 'grid', id: 'versions' },
    el('tr', {}, ...['version', 'id', 'stored', 'matches', 'crashes', 'timeouts', 'illegal answers'].map((h) => el('th', {}, h))));
  a.versions.forEach((v) => versions.append(el('tr', {},
    el('td', { class: 'num' }, `v${v.number}${v.active ? ' (active)' : ''}`), el('td', {}, v.version_id.slice(0, 12)),
    el('td', {}, new Date(v.created_ms).toISOString().slice(0, 19).replace('T', ' ')),
    el('td', { class: 'num' }, String(v.matches)), el('td', { class: 'num' }, String(v.crashes)),
    el('td', { class: 'num' }, String(v.timeouts)), el('td', { class: 'num' }, String(v.illegal_outputs)))));
  if (!a.versions.length) versions.append(el('tr', {}, el('td', { colspan: '7', class: 'muted' }, 'no hosted version')));
  const matches = el('table', { class: 'grid', id: 'recent-matches' },
    el('tr', {}, ...['when', 'arena', 'version', 'opponents', 'place', 'score', 'replay'].map((h) => el('th', {}, h))));
  a.recent_matches.forEach((m) => matches.append(el('tr', { 'data-match': m.match_id },
    el('td', {}, ago(m.ended_at)), el('td', {}, link(`/arenas/${m.arena_id}`, m.arena_id)),
    el('td', { class: 'num' }, m.version ? `v${m.version}` : '—'), el('td', {}, m.opponents.join(', ')),
    el('td', { class: 'num' }, String(m.place)), el('td', { class: 'num' }, String(m.score)),
    el('td', {}, link(`/matches/${m.match_id}`, 'replay')))));
  main().replaceChildren(
    el('h1', {}, `${a.name} `, el('span', { class: 'muted' }, a.agent_id)),
    el('p', { id: 'rating' }, `rating μ ${a.mu.toFixed(2)} · σ ${a.sigma.toFixed(2)} · μ − 3σ ${a.conservative.toFixed(2)} · ${a.matches} matches · ${ratingOf(a)} (its best arena row; matchmaking pairs by the row of its game and player count)`),
    el('p', { class: 'muted', id: 'counts' }, `${a.errors} errors (crashes, illegal answers) · ${a.timeouts} timeouts`),
    el('h2', {}, 'Ratings per arena and version'), ratings,
    el('h2', {}, 'Rating curves (μ, band ± σ)'), ...curves,
    el('h2', {}, 'Versions'), versions,
    el('h2', {}, 'Recent matches'), a.recent_matches.length ? matches : el('p', { class: 'muted' }, 'none yet'));
  document.body.dataset.loaded = String(Date.now());
});
