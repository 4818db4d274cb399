// /nodes: the nodes, the live matches each serves and their decisions/s, and which
// node drives each arena and running tournament (holds its lease).
import { el, every, getJSON, link, main } from './common.js';

every(2000, async () => {
  const data = await getJSON('/api/nodes');
  const t = el('table', { class: 'grid', id: 'nodes' },
    el('tr', {}, ...['node', 'health', 'live matches', 'decisions/s'].map((h) => el('th', {}, h))));
  data.nodes.forEach((n) => t.append(el('tr', {}, el('td', {}, n.address), el('td', {}, n.health),
    el('td', {}, ...n.matches.flatMap((m, i) => [i ? ', ' : '', link(`/matches/${m}`, m)])),
    el('td', { class: 'num' }, String(n.decisions_per_s)))));
  const leases = el('table', { class: 'grid', id: 'leases' },
    el('tr', {}, ...['driven', 'id', 'by node (lease holder)'].map((h) => el('th', {}, h))));
  data.leases.forEach((l) => leases.append(el('tr', {}, el('td', {}, l.kind),
    el('td', {}, link(l.kind === 'arena' ? `/arenas/${l.id}` : `/tournaments/${l.id}`, l.id)),
    el('td', {}, l.driver || 'none right now'))));
  main().replaceChildren(el('h1', {}, 'Nodes'), t, el('h2', {}, 'Arenas and tournaments'), leases,
    el('p', { class: 'muted' }, `${data.unplaced.length} live matches not yet located · this gateway follows ${data.feeds} matches for ${data.viewers} browsers`));
  document.body.dataset.loaded = String(Date.now());
});
