// /agents: registered agents with their ratings, each linking to its page.
import { el, every, getJSON, link, main } from './common.js';

every(5000, async () => {
  const data = await getJSON('/api/agents');
  const t = el('table', { class: 'grid', id: 'agents' },
    el('tr', {}, ...['agent', 'name', 'rating μ', 'σ', 'μ − 3σ', 'matches'].map((h) => el('th', {}, h))));
  data.agents.forEach((a) => t.append(el('tr', {}, el('td', {}, link(`/agents/${a.agent_id}`, a.agent_id)), el('td', {}, a.name),
    el('td', { class: 'num' }, a.mu.toFixed(2)), el('td', { class: 'num' }, a.sigma.toFixed(2)),
    el('td', { class: 'num' }, (a.mu - 3 * a.sigma).toFixed(2)), el('td', { class: 'num' }, String(a.matches)))));
  if (!data.agents.length) t.append(el('tr', {}, el('td', { colspan: '6', class: 'muted' }, 'no registered agent yet')));
  main().replaceChildren(el('h1', {}, 'Agents'), t,
    el('p', { class: 'muted' }, 'Registered agents (the newest 200), best conservative rating first; each links to its arena ratings and versions.'));
  document.body.dataset.loaded = String(Date.now());
});
