// On a match's replay, for the signed-in owner of a hosted seat in it: what the
// seat's program wrote to stderr while it had each decision, beside the step
// the replay shows, and the steps of its crashes, timeouts and illegal answers
// marked (each a link to that step). Nobody else gets any: the console's API
// answers with the signed-in agent's own seats only. Text nodes only (el).
import { el } from './common.js';

const matchId = document.body.dataset.match;
let logs = null;

function draw() {
  const box = document.getElementById('seat-logs');
  if (!box || !logs) return;
  const step = Number(document.body.dataset.step || 0);
  const parts = [el('h2', {}, 'Your seats\' logs at this step')];
  logs.seats.forEach((seat) => {
    const here = seat.steps.filter((s) => s.step === step);
    const failed = seat.steps.filter((s) => s.failure);
    parts.push(el('h3', {}, `seat ${seat.seat} (version ${seat.version_id.slice(0, 12)})`));
    if (failed.length) {
      parts.push(el('p', { class: 'failures' }, 'failed at: ', ...failed.flatMap((f, i) => [i ? ', ' : '',
        el('a', { href: `?step=${f.step}`, class: 'failed-step', 'data-step': String(f.step) }, `step ${f.step} (${f.failure})`)])));
    }
    if (!here.length) parts.push(el('p', { class: 'muted' }, 'nothing written while deciding this step'));
    here.forEach((s) => {
      const entry = el('div', { class: `step-log${s.failure ? ' failed' : ''}`, 'data-seat': String(seat.seat), 'data-step': String(s.step) });
      if (s.failure) entry.append(el('p', { class: 'badge error failure' }, `${s.failure}: ${s.why}`));
      entry.append(el('pre', { class: 'log' }, s.text || '(no stderr)'));
      parts.push(entry);
    });
  });
  box.replaceChildren(...parts);
}

async function fetchLogs() {
  const session = await (await fetch('/console/api/session')).json();
  if (!session.signed_in) return;
  const response = await fetch(`/console/api/matches/${encodeURIComponent(matchId)}/logs`);
  if (!response.ok) return; // none of this match's seats is the signed-in agent's
  logs = await response.json();
  const box = el('section', { class: 'panel', id: 'seat-logs' });
  document.getElementById('main').after(box);
  draw();
  new MutationObserver(draw).observe(document.body, { attributes: true, attributeFilter: ['data-step'] });
}

const ready = new MutationObserver(() => {
  if (document.body.dataset.mode !== 'replay') return;
  ready.disconnect();
  fetchLogs();
});
ready.observe(document.body, { attributes: true, attributeFilter: ['data-mode'] });
if (document.body.dataset.mode === 'replay') { ready.disconnect(); fetchLogs(); }
