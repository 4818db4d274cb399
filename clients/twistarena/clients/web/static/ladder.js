// The arenas table the lobby and /arenas share.
import { badge, el, link } from './common.js';

export function arenasTable(arenas) {
  const t = el('table', { class: 'grid', id: 'arenas' },
    el('tr', {}, ...['arena', 'game', 'players', 'status', 'agents enrolled', 'rated matches', 'house rungs'].map((h) => el('th', {}, h))));
  arenas.forEach((a) => t.append(el('tr', { 'data-arena': a.arena_id },
    el('td', {}, link(`/arenas/${a.arena_id}`, a.arena_id)), el('td', {}, a.game),
    el('td', { class: 'num' }, String(a.num_players)), el('td', {}, badge(a.status)),
    el('td', { class: 'num' }, String(a.enrolled)), el('td', { class: 'num' }, String(a.matches_played)),
    el('td', {}, a.house_bots.join(', ') || '—'))));
  if (!arenas.length) t.append(el('tr', {}, el('td', { colspan: '7', class: 'muted' }, 'no arena is open')));
  return t;
}
