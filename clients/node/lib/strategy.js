'use strict';
// Choosing an action. A strategy sees the seat's observation (the game's own
// message, e.g. TwistedObservation) and the legal actions ({id, label, payload})
// and returns one legal id.

// mulberry32: a small seeded generator, so that --seed reproduces the choices.
function makeRng(seed) {
  let a = Number(BigInt.asUintN(32, BigInt(seed))) >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick(rng, items) {
  return items[Math.floor(rng() * items.length)];
}

// Any game: a uniformly random legal action.
function randomStrategy(rng) {
  return {
    name: 'random',
    ruleHits: 0,
    choose(_game, _observation, legal) {
      return pick(rng, legal).id;
    },
  };
}

// Twisted: twist whenever a twist is legal (payload kind "twist": +2 on the
// plus pile, TW-3.2); otherwise extend or start the row; take the row
// (payload kind "take", minus points, TW-3.3) only when nothing else is legal.
// The other games: random.
function ruleStrategy(rng) {
  const strategy = {
    name: 'rule',
    ruleHits: 0,
    choose(game, _observation, legal) {
      if (game !== 'twisted') return pick(rng, legal).id;
      const twists = legal.filter((a) => a.payload.kind === 'twist');
      if (twists.length > 0) {
        strategy.ruleHits += 1;
        return pick(rng, twists).id;
      }
      const rest = legal.filter((a) => a.payload.kind !== 'take');
      return pick(rng, rest.length > 0 ? rest : legal).id;
    },
  };
  return strategy;
}

const STRATEGIES = { random: randomStrategy, rule: ruleStrategy };

function makeStrategy(name, seed) {
  const factory = STRATEGIES[name];
  if (!factory) {
    throw new Error(`unknown strategy ${JSON.stringify(name)}; use ${Object.keys(STRATEGIES).join(' or ')}`);
  }
  return factory(makeRng(seed));
}

module.exports = { makeStrategy, makeRng, STRATEGIES };
