// /: live matches and recent results, filterable by game and status, the arenas
// and tournaments, refreshed live.
import { ago, badge, el, elapsed, every, getJSON, link, main } from './common.js';
import { arenasTable } from './ladder.js';

const params = new URLSearchParams(window.location.search);
const filters = { game: params.get('game') || '', status: params.get('status') || '' };

function select(id, value, options, onChange) {
  const s = el('select', { id, 'aria-label': id });
  options.forEach(([v, text]) => s.append(el('option', v === value ? { value: v, selected: '' } : { value: v }, text)));
  s.onchange = () => onChange(s.value);
  return s;
}

function seatsText(m) {
  return m.seats.map((s) => s.name).join(', ');
}

function liveTable(matches) {
  const t = el('table', { class: 'grid', id: 'live' },
    el('tr', {}, ...['match', 'game', 'seats', 'status', 'moves', 'decisions/s', 'clock', 'node'].map((h) => el('th', {}, h))));
  const now = Date.now() / 1000;
  matches.forEach((m) => t.append(el('tr', { 'data-match': m.match_id },
    el('td', {}, link(`/matches/${m.match_id}`, m.match_id)), el('td', {}, m.game),
    el('td', {}, seatsText(m)), el('td', {}, badge(m.status)),
    el('td', { class: 'num moves' }, String(m.actions)), el('td', { class: 'num' }, String(m.decisions_per_s)),
    el('td', { class: 'num' }, elapsed(now - m.created_ts)), el('td', {}, m.node || '—'))));
  if (!matches.length) t.append(el('tr', {}, el('td', { colspan: '8', class: 'muted' }, 'no live match')));
  return t;
}

function recentTable(matches) {
  const t = el('table', { class: 'grid', id: 'recent' },
    el('tr', {}, ...['match', 'started', 'game', 'seats (score)', 'status', 'moves', 'winners', 'why'].map((h) => el('th', {}, h))));
  matches.forEach((m) => {
    const r = m.result || { scores: [], winners: [], reason: '' };
    const seats = m.seats.map((s, i) => `${s.name} (${r.scores[i] ?? '—'})`).join(', ');
    t.append(el('tr', { 'data-match': m.match_id },
      el('td', {}, link(`/matches/${m.match_id}`, m.match_id)), el('td', {}, ago(m.created_at)), el('td', {}, m.game), el('td', {}, seats),
      el('td', {}, badge(m.status)), el('td', { class: 'num' }, String(m.actions)),
      el('td', {}, r.winners.map((w) => m.seats[w].name).join(', ')), el('td', {}, r.reason.toLowerCase())));
  });
  if (!matches.length) t.append(el('tr', {}, el('td', { colspan: '8', class: 'muted' }, 'no finished match yet')));
  return t;
}

async function refresh() {
  const q = new URLSearchParams();
  if (filters.game) q.set('game', filters.game);
  if (filters.status) q.set('status', filters.status);
  const [lobby, games, tournaments, arenas] = await Promise.all([
    getJSON(`/api/matches?${q}`), getJSON('/api/games'), getJSON('/api/tournaments'), getJSON('/api/arenas')]);
  const apply = (key) => (value) => {
    filters[key] = value;
    const url = new URL(window.location.href);
    if (value) url.searchParams.set(key, value); else url.searchParams.delete(key);
    window.history.replaceState(null, '', url);
    refresh();
  };
  const bar = el('div', { class: 'filters' }, 'game ',
    select('game', filters.game, [['', 'all'], ...games.games.map((g) => [g.id || g.game_id, g.name])], apply('game')),
    'status ', select('status', filters.status, [['', 'all'], ['waiting', 'waiting'], ['running', 'running'], ['finished', 'finished'], ['cancelled', 'cancelled']], apply('status')));
  const tt = el('table', { class: 'grid', id: 'tournaments' },
    el('tr', {}, ...['tournament', 'game', 'format', 'entrants', 'progress', 'status'].map((h) => el('th', {}, h))));
  tournaments.tournaments.forEach((t) => tt.append(el('tr', {},
    el('td', {}, link(`/tournaments/${t.tournament_id}`, t.tournament_id)), el('td', {}, t.game_id),
    el('td', {}, t.format), el('td', {}, t.entrants.map((e) => e.name).join(', ')),
    el('td', { class: 'num' }, `${t.games_done}/${t.games_planned}`), el('td', {}, badge(t.status)))));
  if (!tournaments.tournaments.length) tt.append(el('tr', {}, el('td', { colspan: '6', class: 'muted' }, 'no tournament yet')));
  main().replaceChildren(el('h1', {}, 'Lobby'), bar,
    el('h2', {}, `Live matches (${lobby.live.length})`), liveTable(lobby.live),
    el('h2', {}, 'Recent results'), recentTable(lobby.recent),
    el('h2', {}, 'Arenas'), arenasTable(arenas.arenas),
    el('h2', {}, 'Tournaments'), tt,
    el('p', { class: 'muted' }, `servers: ${lobby.servers.join(', ')} · JSON: `, link('/api/matches', '/api/matches')));
  document.body.dataset.loaded = String(Date.now());
}

every(2000, refresh);
