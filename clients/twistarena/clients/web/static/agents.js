// /agents: registered agents by their rating (the best μ − 3σ over their arenas,
// with the arena it is of), each linking to its page.
import { el, every, getJSON, link, main, ratingOf } from './common.js';

every(5000, async () => {
  const data = await getJSON('/api/agents');
  const t = el('table', { class: 'grid', id: 'agents' },
    el('tr', {}, ...['agent', 'name', 'μ − 3σ', 'μ', 'σ', 'matches', 'rated in'].map((h) => el('th', {}, h))));
  data.agents.forEach((a) => t.append(el('tr', { 'data-agent': a.agent_id }, el('td', {}, link(`/agents/${a.agent_id}`, a.agent_id)), el('td', {}, a.name),
    el('td', { class: 'num' }, a.conservative.toFixed(2)), el('td', { class: 'num' }, a.mu.toFixed(2)),
    el('td', { class: 'num' }, a.sigma.toFixed(2)), el('td', { class: 'num' }, String(a.matches)),
    el('td', {}, a.rating_arena_id ? link(`/arenas/${a.rating_arena_id}`, ratingOf(a)) : ratingOf(a)))));
  if (!data.agents.length) t.append(el('tr', {}, el('td', { colspan: '7', class: 'muted' }, 'no registered agent yet')));
  main().replaceChildren(el('h1', {}, 'Agents'), t,
    el('p', { class: 'muted' }, 'Registered agents (the newest 200), ordered by rating: the best μ − 3σ over the arenas each plays in (the arena and version named; the same row as that arena\'s leaderboard); not yet rated last.'));
  document.body.dataset.loaded = String(Date.now());
});
