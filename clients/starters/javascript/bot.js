#!/usr/bin/env node
// A twistarena starter bot in JavaScript, no dependencies (Node.js 18+).
// Plays all three games through the bridge:
//   twistarena bot --exec "node clients/starters/javascript/bot.js" --server ... --match ... --token ...
// Reads one JSON message per line on stdin, answers each decision with an action id on stdout.
// Anything for a person goes to stderr (the bridge logs it).
'use strict';
const readline = require('readline');

// Lower is better: twist or take a bonus first, then plain card plays,
// keep Twhist cards for later, decline and take the Twisted row last.
const RANK = { twist: 0, bonus: 0, play: 1, extend: 1, start: 1, pick: 1, reserve: 1,
  twhist: 3, decline: 4, stop: 4, take: 5 };

function rank(action) {
  const p = action.payload;
  const kind = p.kind in RANK ? RANK[p.kind] : 2;
  const card = p.card === undefined ? 0 : (typeof p.card === 'object' ? p.card.value : p.card);
  return [kind, card, action.id];
}

function choose(decision) {
  let best = decision.legal_actions[0];
  for (const action of decision.legal_actions) {
    const a = rank(action);
    const b = rank(best);
    if (a[0] < b[0] || (a[0] === b[0] && (a[1] < b[1] || (a[1] === b[1] && a[2] < b[2])))) {
      best = action;
    }
  }
  return best.id;
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.type === 'decision') {
    process.stdout.write(`${choose(message)}\n`);
  } else if (message.type === 'over') {
    console.error(`match over: seat ${message.seat}, places ${message.places}`);
    process.exit(0);
  }
});
