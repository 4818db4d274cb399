// The table of each game, drawn from its public view (what Watch gives a spectator).
// A finished match's replay may also pass every seat's hidden cards (`hands`,
// one entry per seat: hand, reserve, twhist, face_down): drawn face up then.
import {
  COLOUR, FAMILY, backCard, flipCard, trickyCard, twhistCard, twhistSpecial, twistedCard,
} from './cards.js';
import { el } from './common.js';

function zone(label, cards, name) {
  const box = el('div', { class: 'zone', 'data-zone-name': name });
  cards.forEach((c) => box.append(c));
  return [el('div', { class: 'zone-label' }, label), box];
}

function backs(name, count) {
  return Array.from({ length: count }, (_, i) => backCard(name, i));
}

function seatBox(seat, names, view, lines) {
  const toAct = (view.to_act || []).includes(seat);
  const box = el('div', { class: `seat${toAct ? ' to-act' : ''}`, 'data-seat': String(seat) });
  box.append(el('h3', {}, el('span', {}, `${seat}: ${names[seat] || `seat ${seat}`}`),
    el('span', { class: 'muted' }, toAct ? 'to act' : '')));
  lines.forEach((part) => box.append(...(Array.isArray(part) ? part : [part])));
  return box;
}

// A seat's hand: face up when its hidden cards are given, else backs.
function handZone(seat, count, shown, draw) {
  const cards = shown ? shown.map((c) => draw(`hand-${seat}`, c)) : backs(`hand-${seat}`, count);
  return zone(`hand (${count})`, cards, `hand-${seat}`);
}

function header(parts) {
  return el('p', { class: 'muted' }, parts.filter(Boolean).join(' · '));
}

function symbolOf(style, name) {
  return style ? `${style.letter} ${name}` : name || '—';
}

function drawTrickyTwist(view, names, hands) {
  const root = el('div', { class: 'table tricky_twist' });
  root.append(header([`round ${view.round}/${view.rounds}`, `phase ${view.phase}`,
    `scoring card: ${view.scoring_card || '—'}`, `${view.scoring_cards_left} scoring cards left`,
    `led family: ${symbolOf(FAMILY[view.led_family], view.led_family)}`]));
  const trick = (view.trick || []).map((p) => {
    const c = trickyCard('trick', p.card);
    c.title += ` (seat ${p.seat})`;
    return c;
  });
  root.append(...zone('trick in play', trick, 'trick'));
  const supply = el('div', { class: 'zone', 'data-zone-name': 'supply' });
  (view.supply || []).forEach((b) => supply.append(el('span', { class: 'badge', 'data-bonus': b.bonus }, b.face.replace(/_/g, ' '))));
  root.append(el('div', { class: 'zone-label' }, 'bonus supply'), supply);
  const seats = el('div', { class: 'seats' });
  (view.players || []).forEach((p) => {
    const tricks = p.tricks.flatMap((t) => t.cards.map((c) => trickyCard(`tricks-${p.seat}`, c)));
    const falseTricks = p.false_tricks.flatMap((t) => t.cards.map((c) => trickyCard(`false-${p.seat}`, c)));
    const known = p.known_in_hand.map((c) => trickyCard(`known-${p.seat}`, c));
    seats.append(seatBox(p.seat, names, view, [
      el('div', {}, el('strong', { class: 'score' }, `score ${view.scores[p.seat]}`),
        el('span', { class: 'muted' }, ` · ${p.tricks.length} tricks · ${p.false_tricks.length} false tricks · reserve ${p.reserve_count}`)),
      handZone(p.seat, p.hand_count, hands && hands[p.seat].hand, trickyCard),
      hands && hands[p.seat].reserve.length
        ? zone('reserve', hands[p.seat].reserve.map((c) => trickyCard(`reserve-${p.seat}`, c)), `reserve-${p.seat}`) : [],
      known.length ? zone('revealed in hand', known, `known-${p.seat}`) : [],
      zone('tricks', tricks, `tricks-${p.seat}`),
      zone('false tricks', falseTricks, `false-${p.seat}`),
      el('div', { class: 'zone-label' }, `bonuses: ${p.bonuses.map((b) => b.face.replace(/_/g, ' ')).join(', ') || '—'}`),
    ]));
  });
  root.append(seats);
  return root;
}

function drawTwisted(view, names, hands) {
  const root = el('div', { class: 'table twisted' });
  // extend_low/high are -1 when nothing may extend the row (the round is over).
  root.append(header([`round ${view.round}/${view.rounds}`, `phase ${view.phase}`,
    `draw pile ${view.draw_pile}`, ...(view.extend_low >= 0 ? [`extends ${view.extend_low}..${view.extend_high}`] : [])]));
  root.append(...zone('the row, in order', (view.row || []).map((n) => twistedCard('row', n)), 'row'));
  const seats = el('div', { class: 'seats' });
  (view.seats || []).forEach((s) => {
    seats.append(seatBox(s.seat, names, view, [
      el('div', {}, el('strong', { class: 'score' }, `score ${view.scores[s.seat]}`),
        el('span', { class: 'muted' }, ` · this round ${s.round_score}${s.total !== view.scores[s.seat] ? ` · total ${s.total}` : ''}`)),
      handZone(s.seat, s.hand_count, hands && hands[s.seat].hand, twistedCard),
      hands && hands[s.seat].face_down.length
        ? zone('face down (expert)', hands[s.seat].face_down.map((n) => twistedCard(`facedown-${s.seat}`, n)), `facedown-${s.seat}`) : [],
      zone('minus pile (toads -5)', s.minus_pile.map((n) => twistedCard(`minus-${s.seat}`, n)), `minus-${s.seat}`),
      zone('plus pile', s.plus_pile.map((n) => twistedCard(`plus-${s.seat}`, n)), `plus-${s.seat}`),
    ]));
  });
  root.append(seats);
  return root;
}

function drawTwhist(view, names, hands) {
  const root = el('div', { class: 'table twhist' });
  const rules = view.rules || {};
  root.append(header([`phase ${view.phase}`, `tricks ${view.tricks_done}/${view.tricks_total}`,
    `lead colour: ${symbolOf(COLOUR[view.lead_colour], view.lead_colour)}`,
    `dealer ${view.dealer}`, `discard ${(view.discard || []).length}`]));
  const trick = (view.trick || []).map((t) => {
    const c = t.twhist ? twhistSpecial('trick', t.twhist) : twhistCard('trick', t.card);
    c.title += ` (seat ${t.seat})`;
    return c;
  });
  root.append(...zone('the trick (Twhist cards played among them)', trick, 'trick'));
  if ((view.pool || []).length || (view.open_cards || []).length || (view.picked || []).length) {
    root.append(...zone('pool', (view.pool || []).map((c) => twhistCard('pool', c)), 'pool'));
    root.append(...zone('open cards', (view.open_cards || []).map((c) => twhistCard('open', c)), 'open'));
    root.append(...zone('picked', (view.picked || []).map((c) => twhistCard('picked', c)), 'picked'));
  }
  const seats = el('div', { class: 'seats' });
  (view.players || []).forEach((p) => {
    const flips = [];
    for (let v = rules.flip_min ?? -1; v <= (rules.flip_max ?? 8); v += 1) {
      const stars = (rules.stars || [])[v - (rules.flip_min ?? -1)] ?? 0;
      flips.push(flipCard(`flip-${p.seat}`, v, p.star_side.includes(v), stars));
    }
    const shownTwhist = hands ? hands[p.seat].twhist : p.twhist_names || [];
    const held = shownTwhist.length || hands
      ? shownTwhist.map((name) => twhistSpecial(`twhist-${p.seat}`, name))
      : backs(`twhist-${p.seat}`, p.twhist_count);
    seats.append(seatBox(p.seat, names, view, [
      el('div', {}, el('strong', { class: 'score' }, `score ${view.scores[p.seat]}`),
        el('span', { class: 'muted' }, ` · ${p.stars} stars on ${p.star_cards} FLIP cards · void: ${p.void.join(', ') || '—'}`)),
      handZone(p.seat, p.hand_count, hands && hands[p.seat].hand, twhistCard),
      zone('FLIP cards (star side: ★)', flips, `flip-${p.seat}`),
      zone(`Twhist cards held (${p.twhist_count})`, held, `twhist-${p.seat}`),
    ]));
  });
  root.append(seats);
  return root;
}

const DRAW = { tricky_twist: drawTrickyTwist, twisted: drawTwisted, twhist: drawTwhist };

export function drawTable(game, view, names, hands) {
  if (!view) return el('p', { class: 'muted' }, 'waiting for the first view...');
  return (DRAW[game] || (() => el('pre', {}, JSON.stringify(view, null, 1))))(view, names, hands);
}
