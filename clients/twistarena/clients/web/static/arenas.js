// /arenas: every arena with its players and rated matches.
import { el, every, getJSON, main } from './common.js';
import { arenasTable } from './ladder.js';

every(3000, async () => {
  const data = await getJSON('/api/arenas');
  main().replaceChildren(el('h1', {}, 'Arenas'), arenasTable(data.arenas),
    el('p', { class: 'muted' }, 'Rated play that never stops: one arena per game and player count.'));
  document.body.dataset.loaded = String(Date.now());
});
