// /matches/ID: the table live (Server-Sent Events), or a finished match's replay
// with a scrubber (?step=N opens at step N) and a "show hands" switch (?hands=1)
// that draws every seat's hidden cards: only a finished match's replay has them.
import { badge, el, getJSON, link, main, showError } from './common.js';
import { drawTable } from './table.js';

const matchId = document.body.dataset.match;
const state = { match: null, view: null, hands: null, events: [], toActSince: new Map(), mode: 'live' };

function names() { return state.match.seats.map((s) => s.name); }

function headerBox() {
  const m = state.match;
  const result = m.result ? ` · winners: ${m.result.winners.map((s) => names()[s]).join(', ')} (${m.result.reason.toLowerCase()})` : '';
  return el('div', {},
    el('h1', {}, `${m.game}: match ${m.match_id} `, badge(m.status)),
    el('p', { class: 'muted' }, `${m.num_players} seats: ${names().join(', ')}`,
      m.node ? ` · node ${m.node}` : '', result, ' · ', link(`/rules/${m.game_id}`, 'rules')));
}

function clocks(view) {
  const box = el('div', { class: 'panel', id: 'clocks' }, el('h2', {}, 'Clocks'));
  const now = performance.now();
  const toAct = new Set((view && view.to_act) || []);
  state.match.seats.forEach((seat) => {
    let text = 'waiting';
    let low = false;
    if (state.mode === 'live' && toAct.has(seat.seat) && state.match.decision_ms) {
      const since = state.toActSince.get(seat.seat) ?? now;
      const left = Math.max(0, state.match.decision_ms - (now - since)) / 1000;
      text = `to act · ${left.toFixed(1)} s left`;
      low = left < 1;
    } else if (toAct.has(seat.seat)) {
      text = 'to act';
    }
    box.append(el('div', { class: `clock${low ? ' low' : ''}`, 'data-seat': String(seat.seat) },
      `${seat.seat}: ${seat.name} — ${text}${seat.timeouts ? ` · ${seat.timeouts} timeouts` : ''}`));
  });
  return box;
}

// lines: texts, or {text, step} in a replay: each event is numbered with the
// step it happened at, the scrubber's number.
function eventsBox(lines) {
  const list = el('ol', { class: 'events', id: 'events' });
  lines.forEach((line, i) => {
    const step = typeof line === 'object' ? line.step : null;
    const attrs = { class: i === lines.length - 1 ? 'latest' : '' };
    if (step !== null) Object.assign(attrs, { value: String(step), 'data-step': String(step) });
    list.append(el('li', attrs, typeof line === 'object' ? line.text : line));
  });
  const box = el('div', { class: 'panel' }, el('h2', {}, 'Events'), list);
  return box;
}

function render(lines, scrubber) {
  const table = el('div', { class: 'panel', id: 'table' }, drawTable(state.match.game_id, state.view, names(), state.hands));
  const side = el('div', {}, clocks(state.view), eventsBox(lines));
  const parts = [headerBox()];
  if (scrubber) parts.push(scrubber);
  parts.push(el('div', { class: 'layout' }, table, side));
  main().replaceChildren(...parts);
  const list = document.getElementById('events');
  list.scrollTop = list.scrollHeight;
  document.body.dataset.mode = state.mode;
}

function noteToAct(view) {
  const now = performance.now();
  const next = new Map();
  (view.to_act || []).forEach((s) => next.set(s, state.toActSince.get(s) ?? now));
  state.toActSince = next;
}

// ---- live ---------------------------------------------------------------
function live() {
  state.mode = 'live';
  const source = new EventSource(`/api/matches/${encodeURIComponent(matchId)}/stream`);
  let queued = false;
  // Several messages may arrive in one batch: draw once per frame.
  const draw = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      if (state.mode === 'live') render(state.events.map((e) => e.text).filter(Boolean).slice(-300));
    });
  };
  source.onmessage = (message) => {
    const msg = JSON.parse(message.data);
    if (msg.type === 'snapshot') {
      state.view = msg.view;
      state.events = msg.events;
      if (msg.node) state.match.node = msg.node;
      if (msg.result) { source.close(); finished(); return; }
    } else if (msg.type === 'view') {
      state.view = msg.view;
    } else if (msg.type === 'event') {
      const last = state.events[state.events.length - 1];
      if (last && msg.event.seq <= last.seq) return;  // already in the snapshot
      state.events.push(msg.event);
      if (state.events.length > 500) state.events.splice(0, state.events.length - 300);
    } else if (msg.type === 'over') {
      source.close();
      finished();
      return;
    } else if (msg.type === 'error') {
      source.close();
      showError(new Error(msg.error));
      return;
    }
    if (state.view) noteToAct(state.view);
    document.body.dataset.seq = String(state.events.length ? state.events[state.events.length - 1].seq : -1);
    draw();
  };
  source.addEventListener('end', () => source.close());
  setInterval(() => {
    if (state.mode === 'live' && state.view) {
      const old = document.getElementById('clocks');
      if (old) old.replaceWith(clocks(state.view));
    }
  }, 250);
}

async function finished() {
  state.match = await getJSON(`/api/matches/${encodeURIComponent(matchId)}`);
  await replay();
}

// ---- replay -------------------------------------------------------------
async function replay() {
  state.mode = 'replay';
  const data = await getJSON(`/api/matches/${encodeURIComponent(matchId)}/replay`);
  const steps = data.steps;
  const last = steps.length - 1;
  const params = new URLSearchParams(window.location.search);
  let step = params.has('step') ? Math.min(last, Math.max(0, Number(params.get('step')) || 0)) : last;
  let timer = null;
  let speed = 1;

  const slider = el('input', { type: 'range', min: '0', max: String(last), value: String(step), id: 'step', 'aria-label': 'step' });
  const label = el('span', { id: 'step-label', class: 'muted' });
  const play = el('button', { id: 'play' }, 'play');
  const speedSel = el('select', { id: 'speed', 'aria-label': 'speed' },
    ...[0.5, 1, 2, 4, 8].map((s) => el('option', s === 1 ? { value: String(s), selected: '' } : { value: String(s) }, `${s}x`)));
  const back = el('button', { id: 'back', title: 'step back (←)' }, '◀');
  const fwd = el('button', { id: 'forward', title: 'step forward (→)' }, '▶');
  const handsBox = el('input', { type: 'checkbox', id: 'show-hands' });
  handsBox.checked = params.get('hands') === '1';
  const handsSwitch = el('label', { class: 'muted' }, handsBox, ' show hands');
  const bar = el('div', { class: 'panel scrubber' }, back, play, fwd, slider, label, speedSel, handsSwitch);

  const show = (n) => {
    step = Math.min(last, Math.max(0, n));
    state.view = steps[step].view;
    // The last step of a finished match shows every hand; the switch is for the others.
    state.hands = handsBox.checked || step === last ? steps[step].hands : null;
    const lines = steps.slice(0, step + 1).flatMap((s, i) => s.lines.map((text) => ({ text, step: i })));
    slider.value = String(step);
    const action = steps[step].action;
    label.textContent = `step ${step}/${last}${action ? ` · seat ${action.seat}: ${action.label}${action.timeout ? ' (timeout)' : ''}` : ''}`;
    const url = new URL(window.location.href);
    url.searchParams.set('step', String(step));
    if (handsBox.checked) url.searchParams.set('hands', '1'); else url.searchParams.delete('hands');
    window.history.replaceState(null, '', url);
    document.body.dataset.step = String(step);
    document.body.dataset.hands = state.hands ? 'shown' : 'hidden';
    render(lines, bar);
  };
  const stop = () => { if (timer) clearInterval(timer); timer = null; play.textContent = 'play'; };
  const start = () => {
    stop();
    if (step >= last) show(0);
    play.textContent = 'pause';
    timer = setInterval(() => { if (step >= last) stop(); else show(step + 1); }, 600 / speed);
  };
  play.onclick = () => (timer ? stop() : start());
  back.onclick = () => { stop(); show(step - 1); };
  fwd.onclick = () => { stop(); show(step + 1); };
  slider.oninput = () => { stop(); show(Number(slider.value)); };
  speedSel.onchange = () => { speed = Number(speedSel.value); if (timer) start(); };
  handsBox.onchange = () => show(step);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowLeft') { stop(); show(step - 1); }
    if (e.key === 'ArrowRight') { stop(); show(step + 1); }
    if (e.key === ' ' && e.target === document.body) { e.preventDefault(); if (timer) stop(); else start(); }
  });
  show(step);
}

async function boot() {
  try {
    state.match = await getJSON(`/api/matches/${encodeURIComponent(matchId)}`);
    if (state.match.status === 'finished' || state.match.status === 'cancelled') await replay();
    else live();
  } catch (error) {
    showError(error);
  }
}
boot();
