// /nodes: the nodes, the live matches each serves and their decisions/s.
import { el, every, getJSON, link, main } from './common.js';

every(2000, async () => {
  const data = await getJSON('/api/nodes');
  const t = el('table', { class: 'grid', id: 'nodes' },
    el('tr', {}, ...['node', 'health', 'live matches', 'decisions/s'].map((h) => el('th', {}, h))));
  data.nodes.forEach((n) => t.append(el('tr', {}, el('td', {}, n.address), el('td', {}, n.health),
    el('td', {}, ...n.matches.flatMap((m, i) => [i ? ', ' : '', link(`/matches/${m}`, m)])),
    el('td', { class: 'num' }, String(n.decisions_per_s)))));
  main().replaceChildren(el('h1', {}, 'Nodes'), t,
    el('p', { class: 'muted' }, `${data.unplaced.length} live matches not yet located · this gateway follows ${data.feeds} matches for ${data.viewers} browsers`));
  document.body.dataset.loaded = String(Date.now());
});
