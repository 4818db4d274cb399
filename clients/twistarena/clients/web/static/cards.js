// Cards drawn as SVG. Every suit or colour also has its own symbol, so the
// table reads the same without colour vision.
const SVGNS = 'http://www.w3.org/2000/svg';

// Tricky Twist families and Twhist colours: fill colour + symbol shape.
export const FAMILY = {
  moon: { color: '#5b5ea6', symbol: 'moon', letter: '☾' },
  sun: { color: '#d98e04', symbol: 'sun', letter: '☀' },
  square: { color: '#2a9d8f', symbol: 'square', letter: '■' },
  circle: { color: '#d1495b', symbol: 'circle', letter: '●' },
};
export const COLOUR = {
  red: { color: '#d1495b', symbol: 'triangle', letter: '▲' },
  yellow: { color: '#c99700', symbol: 'circle', letter: '●' },
  green: { color: '#2a9d8f', symbol: 'square', letter: '■' },
  blue: { color: '#3d7ec8', symbol: 'diamond', letter: '◆' },
};

function shape(kind, cx, cy, r, color) {
  switch (kind) {
    case 'moon':
      return `<circle cx="${cx}" cy="${cy}" r="${r}" fill="${color}"/>`
        + `<circle cx="${cx + r * 0.5}" cy="${cy - r * 0.25}" r="${r * 0.85}" fill="#fff"/>`;
    case 'sun': {
      let rays = '';
      for (let i = 0; i < 8; i += 1) {
        const a = (Math.PI / 4) * i;
        rays += `<line x1="${cx + Math.cos(a) * r * 0.7}" y1="${cy + Math.sin(a) * r * 0.7}" x2="${cx + Math.cos(a) * r * 1.15}" y2="${cy + Math.sin(a) * r * 1.15}" stroke="${color}" stroke-width="2"/>`;
      }
      return `${rays}<circle cx="${cx}" cy="${cy}" r="${r * 0.55}" fill="${color}"/>`;
    }
    case 'square':
      return `<rect x="${cx - r * 0.8}" y="${cy - r * 0.8}" width="${r * 1.6}" height="${r * 1.6}" fill="${color}"/>`;
    case 'circle':
      return `<circle cx="${cx}" cy="${cy}" r="${r * 0.85}" fill="${color}"/>`;
    case 'triangle':
      return `<path d="M${cx} ${cy - r} L${cx + r} ${cy + r * 0.8} L${cx - r} ${cy + r * 0.8}z" fill="${color}"/>`;
    case 'diamond':
      return `<path d="M${cx} ${cy - r} L${cx + r * 0.8} ${cy} L${cx} ${cy + r} L${cx - r * 0.8} ${cy}z" fill="${color}"/>`;
    case 'toad':
      return `<ellipse cx="${cx}" cy="${cy + r * 0.2}" rx="${r}" ry="${r * 0.7}" fill="${color}"/>`
        + `<circle cx="${cx - r * 0.45}" cy="${cy - r * 0.45}" r="${r * 0.32}" fill="${color}"/>`
        + `<circle cx="${cx + r * 0.45}" cy="${cy - r * 0.45}" r="${r * 0.32}" fill="${color}"/>`
        + `<circle cx="${cx - r * 0.45}" cy="${cy - r * 0.45}" r="${r * 0.13}" fill="#fff"/>`
        + `<circle cx="${cx + r * 0.45}" cy="${cy - r * 0.45}" r="${r * 0.13}" fill="#fff"/>`;
    default:
      return '';
  }
}

function make(zone, id, title, inner, extraClass = '') {
  const el = document.createElement('span');
  el.className = `card ${extraClass}`.trim();
  el.dataset.zone = zone;
  el.dataset.card = String(id);
  el.title = title;
  el.setAttribute('role', 'img');
  el.setAttribute('aria-label', title);
  el.innerHTML = `<svg xmlns="${SVGNS}" viewBox="0 0 38 54">`
    + '<rect class="face" x="1" y="1" width="36" height="52" rx="4" fill="#fff" stroke="#7a8594"/>'
    + `${inner}</svg>`;
  return el;
}

function suited(zone, id, value, style, title) {
  const label = String(value);
  const inner = `<text x="5" y="14" font-size="11" font-weight="700" fill="${style.color}">${label}</text>`
    + shape(style.symbol, 19, 32, 9, style.color)
    + `<text x="33" y="49" font-size="9" text-anchor="end" fill="${style.color}">${label}</text>`;
  return make(zone, id, title, inner);
}

// A Tricky Twist card {id, family, value}.
export function trickyCard(zone, card) {
  const style = FAMILY[card.family] || { color: '#444', symbol: 'circle' };
  return suited(zone, card.id, card.value, style, `${card.value} of ${card.family}`);
}

// A Twhist card {id, colour, value}.
export function twhistCard(zone, card) {
  const style = COLOUR[card.colour] || { color: '#444', symbol: 'circle' };
  return suited(zone, card.id, card.value, style, `${card.colour} ${card.value}`);
}

// A Twisted card: a number 12..98; toads (same digit twice) carry a toad.
export function isToad(n) { return Math.floor(n / 10) === n % 10; }
export function twistedCard(zone, n) {
  const toad = isToad(n);
  const inner = `<text x="19" y="${toad ? 22 : 33}" font-size="15" font-weight="700" text-anchor="middle" fill="#1d2430">${n}</text>`
    + (toad ? shape('toad', 19, 38, 8, '#2f7d32') : '');
  return make(zone, n, toad ? `${n} (toad, -5)` : String(n), inner, toad ? 'toad' : '');
}

// A Twhist FLIP card: its number side, or its star side (with its stars) when
// flipped. The id carries the side: "5" or "5*".
export function flipCard(zone, value, starSide, stars) {
  const inner = starSide
    ? `<path d="M19 12l2.8 5.6 6.2.9-4.5 4.4 1.1 6.2-5.6-2.9-5.6 2.9 1.1-6.2-4.5-4.4 6.2-.9z" fill="#d98e04"/>`
      + `<text x="19" y="42" font-size="10" font-weight="700" text-anchor="middle" fill="#1d2430">${'★'.repeat(stars)}</text>`
      + `<text x="5" y="50" font-size="8" fill="#5b6472">${value}</text>`
    : `<text x="19" y="33" font-size="15" font-weight="700" text-anchor="middle" fill="#5b6472">${value}</text>`;
  const title = starSide ? `FLIP ${value}, star side (${stars} stars)` : `FLIP ${value}, number side`;
  return make(zone, starSide ? `${value}*` : String(value), title, inner, `flip${starSide ? ' star' : ''}`);
}

// A Twhist card (Round-winner, Thief, Pole-position, Pass), held or played.
const TWHIST_SYMBOL = { round_winner: '♛', thief: '✋', pole_position: '⚑', pass: '⤼' };
export function twhistSpecial(zone, name) {
  const inner = `<text x="19" y="30" font-size="16" text-anchor="middle" fill="#8d5a97">${TWHIST_SYMBOL[name] || '?'}</text>`
    + `<text x="19" y="47" font-size="6.5" text-anchor="middle" fill="#1d2430">${name.replace(/_/g, ' ')}</text>`;
  return make(zone, `tw:${name}`, `Twhist card ${name.replace(/_/g, ' ')}`, inner, 'special');
}

// The back of a hidden card (a hand or reserve: only the count is public).
export function backCard(zone, index) {
  const inner = '<rect x="5" y="5" width="28" height="44" rx="3" fill="none" stroke="#fff" stroke-dasharray="3 2"/>';
  return make(zone, `back${index}`, 'hidden card', inner, 'back small');
}
