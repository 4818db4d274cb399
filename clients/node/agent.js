#!/usr/bin/env node
'use strict';
// A twistarena agent in JavaScript: plays one seat of a match of any game over
// the twistarena.v1 Play stream, reconnecting and resuming when the stream
// drops, and prints the match result as one JSON line on stdout.
//
//   node agent.js --server 127.0.0.1:50051 --match ID --token TOKEN [--strategy random|rule] [--seed N]
//
// Exit codes: 0 the match completed; 4 it ended otherwise (forfeit, cancelled);
// 2 the server refused the seat for good (bad token, unknown match, taken over);
// 3 no server took the seat within --give-up-s; 1 bad usage or an unexpected error.

const fs = require('fs');
const crypto = require('crypto');
const { parseArgs } = require('util');
const grpc = require('@grpc/grpc-js');
const { load, structToJs } = require('./lib/proto');
const { makeStrategy } = require('./lib/strategy');

const REASON_KEY = 'twistarena-reason';
const OWNER_KEY = 'twistarena-owner'; // NOT_OWNER, STORE_UNAVAILABLE: HOST:PORT of the match's owner
// A refusal's hint: do not call this server again before this many ms (another first).
const RETRY_AFTER_KEY = 'twistarena-retry-after-ms';
// Refusals that no retry can fix (the `twistarena-reason` trailer of the failed stream).
const FATAL_REASONS = new Set([
  'BAD_TOKEN', 'UNKNOWN_MATCH', 'MALFORMED_MESSAGE', 'TAKEN_OVER',
  'INVALID_OPTIONS', 'PERMISSION_DENIED_ADMIN',
]);
const FATAL_CODES = new Set([
  grpc.status.UNAUTHENTICATED, grpc.status.NOT_FOUND, grpc.status.INVALID_ARGUMENT,
  grpc.status.PERMISSION_DENIED, grpc.status.UNIMPLEMENTED,
]);
const CHANNEL_OPTIONS = {
  'grpc.keepalive_time_ms': 20000,
  'grpc.keepalive_timeout_ms': 10000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 2000,
};

const USAGE = `usage: node agent.js --server HOST:PORT[,HOST:PORT...] --match ID --token TOKEN
                     [--strategy random|rule] [--seed N] [--bearer] [--no-events] [--no-batch]
                     [--tls] [--root-cert FILE] [--proto-dir DIR] [--give-up-s S]
                     [--drop-every N] [--probe-illegal] [--verbose]

  --strategy      random: a uniformly random legal action (default: rule);
                  rule: in Twisted twist whenever possible and take the row only
                  when nothing else is legal; random in the other games
  --seed N        seed of the strategy's random choices (default: random)
  --bearer        send the seat token as metadata "authorization: Bearer" instead of in Join
  --no-events     ask the server not to send events (Join.no_events)
  --no-batch      one message per event and acceptance instead of batched delivery
                  (by default Join.batched: they ride on the seat's next message)
  --tls           use TLS (system roots, or --root-cert FILE)
  --proto-dir DIR the folder holding twistarena/v1/*.proto (default: the repository's proto/)
  --give-up-s S   give up after S seconds without getting the seat back (default 120)
  --drop-every N  testing: drop the stream on every Nth new decision, before answering,
                  to exercise reconnect and resume
  --probe-illegal testing: answer the first decision with an illegal action id first,
                  to exercise AnswerRejected(ILLEGAL_ACTION) and the retry
  --verbose       log every message on stderr`;

// The server to try after the one at `index`: the next of the list whose retry hint
// has run out (`waitMs` 0), else the one whose hint runs out first and how long that is.
function nextServer(servers, index, notBefore) {
  const now = Date.now();
  let best = { index: index + 1, waitMs: Infinity };
  for (let step = 1; step <= servers.length; step += 1) {
    const waitMs = Math.max(0, (notBefore.get(servers[(index + step) % servers.length]) || 0) - now);
    if (waitMs === 0) return { index: index + step, waitMs: 0 };
    if (waitMs < best.waitMs) best = { index: index + step, waitMs };
  }
  return best;
}

class FatalError extends Error {
  constructor(message, exitCode) {
    super(message);
    this.exitCode = exitCode;
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function statusName(code) {
  return Object.keys(grpc.status).find((k) => grpc.status[k] === code) || String(code);
}

function resultToJs(result) {
  const r = result || {};
  return {
    scores: (r.scores || []).map(Number),
    places: (r.places || []).map(Number),
    winners: (r.winners || []).map(Number),
    reason: r.reason || 'END_REASON_UNSPECIFIED',
    detail: r.detail || '',
  };
}

class Agent {
  constructor(options) {
    this.servers = options.servers;
    this.matchId = options.matchId;
    this.token = options.token;
    this.bearer = options.bearer;
    this.noEvents = options.noEvents;
    this.batched = !options.noBatch;
    this.credentials = options.credentials;
    this.strategy = options.strategy;
    this.giveUpMs = options.giveUpMs;
    this.dropEvery = options.dropEvery;
    this.probeIllegal = options.probeIllegal;
    this.verbose = options.verbose;
    this.proto = options.proto;
    this.clients = new Map();
    // What the seat knows.
    this.seat = -1;
    this.gameId = '';
    this.numPlayers = 0;
    this.nextSeq = 0; // the next event seq not yet seen: Join.resume_from_seq on a reconnect
    // Decisions: decision id (a decimal string) -> {did, legal, observation, tried, answer}.
    this.pending = new Map();
    this.acceptedIds = new Set();
    this.call = null;
    this.dropping = false;
    // Counters for the result line.
    this.stats = {
      decisions: 0, answers: 0, accepted: 0, rejections: 0, rejections_by_reason: {},
      reconnects: 0, joins: 0, events: 0, duplicate_events: 0, event_gaps: 0,
      resent_decisions: 0, drops: 0, batches: 0,
    };
  }

  log(...parts) {
    process.stderr.write(`[agent ${this.matchId}/seat ${this.seat}] ${parts.join(' ')}\n`);
  }

  debug(...parts) {
    if (this.verbose) this.log(...parts);
  }

  client(kind, address) {
    const key = `${kind}@${address}`;
    let client = this.clients.get(key);
    if (!client) {
      client = new this.proto[kind](address, this.credentials, CHANNEL_OPTIONS);
      this.clients.set(key, client);
    }
    return client;
  }

  close() {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }

  // Play until the match is over; returns the MatchResult (as a plain object).
  async run() {
    let attempt = 0;
    let index = 0;
    let lastSeated = Date.now();
    // A refusal may name the match's owner (trailer twistarena-owner): the next
    // attempt goes there at once; the server list stays the fallback.
    let redirect = '';
    // address -> Date.now() before which it is not called again (twistarena-retry-after-ms).
    const notBefore = new Map();
    for (;;) {
      const address = redirect || this.servers[index % this.servers.length];
      const followed = redirect !== '';
      redirect = '';
      const outcome = await this.session(address);
      if (outcome.result) return outcome.result;
      const verdict = await this.classify(address, outcome);
      if (verdict.result) return verdict.result;
      if (outcome.joined) {
        attempt = 0;
        lastSeated = Date.now();
      }
      if (Date.now() - lastSeated > this.giveUpMs) {
        throw new FatalError(`no server of ${this.servers.join(',')} gave the seat back for `
          + `${this.giveUpMs / 1000} s; giving up`, 3);
      }
      if (verdict.retryAfterMs) notBefore.set(address, Date.now() + verdict.retryAfterMs);
      if (verdict.owner && verdict.owner !== address && (outcome.joined || !followed)) {
        redirect = verdict.owner;
        this.log(`stream ended (${verdict.why}); the match is at ${redirect}`);
        continue;
      }
      // Exponential backoff with jitter: half fixed, half random; no wait after our own
      // drop, none either after a hint (the server that gave it is skipped meanwhile).
      const cap = Math.min(2000, 100 * 2 ** attempt);
      let delay = outcome.dropped || verdict.retryAfterMs ? 0 : cap / 2 + Math.random() * (cap / 2);
      if (!outcome.joined && !outcome.dropped) {
        // The next server whose hint has run out; if none, wait for the soonest.
        const next = nextServer(this.servers, index, notBefore);
        index = next.index;
        delay = Math.max(delay, next.waitMs);
      }
      this.log(`stream ended (${verdict.why}); reconnecting in ${Math.round(delay)} ms `
        + `with resume_from_seq=${this.nextSeq}`);
      await sleep(delay);
      attempt += 1;
    }
  }

  // One Play stream, from Join to the end of the call.
  session(address) {
    return new Promise((resolve) => {
      const metadata = new grpc.Metadata();
      if (this.bearer) metadata.set('authorization', `Bearer ${this.token}`);
      const call = this.client('Play', address).Play(metadata);
      const outcome = { joined: false, result: null, dropped: false, status: null };
      this.call = call;
      this.dropping = false;
      call.on('data', (msg) => {
        try {
          const result = this.handle(msg, outcome);
          if (result) outcome.result = result;
        } catch (err) {
          this.log(`failed to handle a ${msg.msg} message: ${err.stack || err}`);
        }
      });
      call.on('error', () => {}); // the final status arrives in 'status'
      call.on('status', (status) => {
        // Let messages still buffered in the stream (e.g. MatchOver) be handled first.
        setImmediate(() => {
          if (this.call === call) this.call = null;
          outcome.status = status;
          outcome.dropped = outcome.dropped || this.dropping;
          resolve(outcome);
        });
      });
      call.write({
        join: {
          match_id: this.matchId,
          seat_token: this.bearer ? '' : this.token,
          resume_from_seq: String(this.nextSeq),
          no_events: this.noEvents,
          batched: this.batched,
        },
      });
    });
  }

  // What a stream that ended without MatchOver means: a result, a retry or a fatal error.
  async classify(address, outcome) {
    const { code, details, metadata } = outcome.status;
    const reason = (metadata && metadata.get(REASON_KEY)[0]) || '';
    const why = `${statusName(code)}${reason ? ` [${reason}]` : ''}: ${details || ''}`;
    if (outcome.dropped) return { why: 'dropped on purpose' };
    if (code === grpc.status.OK) return { why: 'closed before MatchOver' };
    if (code === grpc.status.FAILED_PRECONDITION) {
      // MATCH_OVER: the match ended while this seat was away; read its record.
      const read = await this.fetchResult(address);
      if (read.result) return { result: read.result };
      // A read that failed (that server's store or link blinked) is tried again as a
      // Join is, on the next server: the end is stored, and one failed read must not
      // leave the seat without it.
      if (read.failed) return { why: `${why}; reading its end failed: ${read.failed}` };
      throw new FatalError(`the server refused the seat: ${why}`, 2);
    }
    if (FATAL_REASONS.has(reason) || FATAL_CODES.has(code)) {
      throw new FatalError(`the server refused the seat: ${why}`, 2);
    }
    const retryAfterMs = (metadata && Number(metadata.get(RETRY_AFTER_KEY)[0])) || 0;
    if ((reason === 'NOT_OWNER' || reason === 'STORE_UNAVAILABLE') && metadata) {
      const owner = metadata.get(OWNER_KEY)[0];
      if (owner) return { why, owner: String(owner), retryAfterMs };
    }
    return { why, retryAfterMs };
  }

  // The match's end from its record: { result }, { failed } when the read failed,
  // or {} when the match is not over.
  fetchResult(address) {
    return new Promise((resolve) => {
      const deadline = new Date(Date.now() + 10000);
      this.client('Matches', address).GetMatch({ match_id: this.matchId }, { deadline }, (err, match) => {
        if (err || !match) return resolve({ failed: err ? err.message : 'no answer' });
        const over = ['MATCH_STATUS_FINISHED', 'MATCH_STATUS_CANCELLED'].includes(match.status);
        return resolve(over ? { result: resultToJs(match.result) } : {});
      });
    });
  }

  handle(msg, outcome) {
    switch (msg.msg) {
      case 'joined':
        outcome.joined = true;
        this.onJoined(msg.joined);
        return null;
      case 'event':
        this.onEvent(msg.event);
        return null;
      case 'decision':
        this.onCarried(msg.decision);
        this.onDecision(msg.decision);
        return null;
      case 'batch':
        this.stats.batches += 1;
        this.onCarried(msg.batch);
        return null;
      case 'accepted':
        this.onAccepted(msg.accepted);
        return null;
      case 'rejected':
        this.onRejected(msg.rejected);
        return null;
      case 'match_over':
        this.debug('match over');
        return resultToJs(msg.match_over.result);
      default:
        this.log(`ignoring an unknown server message ${JSON.stringify(msg.msg)}`);
        return null;
    }
  }

  onJoined(joined) {
    if (this.stats.joins > 0) this.stats.reconnects += 1;
    this.stats.joins += 1;
    this.seat = joined.seat;
    this.gameId = joined.game_id;
    this.numPlayers = joined.num_players;
    this.debug(`joined ${joined.game_id} with ${joined.num_players} players, `
      + `decision_ms=${joined.time_control && joined.time_control.decision_ms}`);
  }

  onEvent(event) {
    const seq = Number(event.seq);
    if (seq < this.nextSeq) {
      this.stats.duplicate_events += 1; // already seen before a reconnect
      return;
    }
    if (seq > this.nextSeq) this.stats.event_gaps += 1;
    this.nextSeq = seq + 1;
    this.stats.events += 1;
    this.debug(`event ${seq} ${event.kind}: ${event.text}`);
  }

  // A batched stream (Join.batched): the acceptance and the events a DecisionRequest
  // or a SeatBatch carries, in that order.
  onCarried(carrier) {
    if (carrier.accepted) this.onAccepted(carrier.accepted);
    for (const event of carrier.events || []) this.onEvent(event);
  }

  onDecision(req) {
    const did = req.decision_id;
    if (this.acceptedIds.has(did)) return;
    // One open decision per seat: a new id settles every older one.
    for (const old of [...this.pending.keys()]) if (old !== did) this.pending.delete(old);
    let decision = this.pending.get(did);
    if (decision) {
      // Sent again (same id) after a reconnect: the decision is still open.
      this.stats.resent_decisions += 1;
      if (decision.answer !== null) this.send(decision, decision.answer);
      else this.decide(decision);
      return;
    }
    const game = req.observation.game || this.gameId;
    decision = {
      did,
      game,
      observation: req.observation[game],
      legal: req.legal_actions.map((a) => ({ id: a.id, label: a.label, payload: structToJs(a.payload) })),
      tried: new Set(),
      answer: null,
    };
    this.pending.set(did, decision);
    this.stats.decisions += 1;
    this.debug(`decision ${did}: ${decision.legal.length} legal, ${req.time_left_ms} ms left`);
    if (this.dropEvery > 0 && this.stats.decisions % this.dropEvery === 0) {
      this.drop();
      return;
    }
    if (this.probeIllegal && this.stats.decisions === 1) {
      const illegal = Math.max(...decision.legal.map((a) => a.id)) + 1000;
      this.send(decision, illegal);
      return;
    }
    this.decide(decision);
  }

  decide(decision, exclude) {
    let legal = decision.legal.filter((a) => !decision.tried.has(a.id));
    if (exclude !== undefined) legal = legal.filter((a) => a.id !== exclude);
    if (legal.length === 0) legal = decision.legal;
    let id;
    try {
      id = this.strategy.choose(decision.game, decision.observation, legal);
    } catch (err) {
      this.log(`strategy failed (${err}); playing the first legal action`);
      id = legal[0].id;
    }
    this.send(decision, id);
  }

  send(decision, actionId) {
    decision.answer = actionId;
    decision.tried.add(actionId);
    const call = this.call;
    if (!call) return; // disconnected: the server sends the decision again after the resume
    this.stats.answers += 1;
    this.debug(`answer ${decision.did} -> ${actionId}`);
    call.write({ answer: { decision_id: decision.did, action_id: actionId } });
  }

  onAccepted(accepted) {
    // A batched stream tells the latest acceptance again after a Join.
    if (this.acceptedIds.has(accepted.decision_id)) return;
    this.acceptedIds.add(accepted.decision_id);
    this.pending.delete(accepted.decision_id);
    this.stats.accepted += 1;
  }

  onRejected(rejected) {
    const { decision_id: did, action_id: actionId, reason, message } = rejected;
    this.stats.rejections += 1;
    const byReason = this.stats.rejections_by_reason;
    byReason[reason] = (byReason[reason] || 0) + 1;
    this.log(`answer ${actionId} to decision ${did} rejected: ${reason}: ${message}`);
    const decision = this.pending.get(did);
    if (!decision) return;
    if (rejected.may_retry) {
      // ILLEGAL_ACTION: the decision is still open; answer again with another legal action.
      this.decide(decision, actionId);
    } else if (reason === 'DUPLICATE_ANSWER') {
      this.acceptedIds.add(did); // it was accepted before (the AnswerAccepted was lost)
      this.pending.delete(did);
    } else {
      // LATE_ANSWER, STALE_DECISION, UNKNOWN_DECISION: settled without us; wait for the next.
      this.pending.delete(did);
    }
  }

  // Testing: end the stream as a network failure would.
  drop() {
    const call = this.call;
    if (!call) return;
    this.stats.drops += 1;
    this.dropping = true;
    this.call = null;
    call.cancel();
  }
}

function parseCommandLine(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      server: { type: 'string' },
      match: { type: 'string' },
      token: { type: 'string' },
      strategy: { type: 'string', default: 'rule' },
      seed: { type: 'string' },
      bearer: { type: 'boolean', default: false },
      'no-events': { type: 'boolean', default: false },
      'no-batch': { type: 'boolean', default: false },
      tls: { type: 'boolean', default: false },
      'root-cert': { type: 'string' },
      'proto-dir': { type: 'string' },
      'give-up-s': { type: 'string', default: '120' },
      'drop-every': { type: 'string', default: '0' },
      'probe-illegal': { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  for (const name of ['server', 'match', 'token']) {
    if (!values[name]) throw new Error(`--${name} is required`);
  }
  const integer = (name, text) => {
    if (!/^\d+$/.test(text)) throw new Error(`--${name} must be a non-negative integer, got ${text}`);
    return text;
  };
  return {
    servers: values.server.split(',').map((s) => s.trim()).filter(Boolean),
    matchId: values.match,
    token: values.token,
    strategy: values.strategy,
    seed: values.seed === undefined ? crypto.randomInt(2 ** 32) : integer('seed', values.seed),
    bearer: values.bearer,
    noEvents: values['no-events'],
    noBatch: values['no-batch'],
    tls: values.tls || Boolean(values['root-cert']),
    rootCert: values['root-cert'],
    protoDir: values['proto-dir'],
    giveUpMs: Number(integer('give-up-s', values['give-up-s'])) * 1000,
    dropEvery: Number(integer('drop-every', values['drop-every'])),
    probeIllegal: values['probe-illegal'],
    verbose: values.verbose,
  };
}

async function main() {
  let args;
  let strategy;
  let proto;
  try {
    args = parseCommandLine(process.argv.slice(2));
    strategy = makeStrategy(args.strategy, args.seed);
    proto = load(args.protoDir);
  } catch (err) {
    process.stderr.write(`error: ${err.message}\n\n${USAGE}\n`);
    return 1;
  }
  const credentials = args.tls
    ? grpc.credentials.createSsl(args.rootCert ? fs.readFileSync(args.rootCert) : null)
    : grpc.credentials.createInsecure();
  const agent = new Agent({ ...args, credentials, strategy, proto });
  let result;
  try {
    result = await agent.run();
  } catch (err) {
    process.stderr.write(`error: ${err.message}\n`);
    agent.close();
    return err instanceof FatalError ? err.exitCode : 1;
  }
  agent.close();
  const line = {
    match_id: agent.matchId,
    seat: agent.seat,
    game_id: agent.gameId,
    num_players: agent.numPlayers,
    strategy: strategy.name,
    seed: String(args.seed),
    completed: result.reason === 'END_REASON_COMPLETED',
    result,
    ...agent.stats,
    rule_hits: strategy.ruleHits,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
  return line.completed ? 0 : 4;
}

if (require.main === module) {
  main().then(
    (code) => { process.exitCode = code; },
    (err) => {
      process.stderr.write(`error: ${err.stack || err}\n`);
      process.exitCode = 1;
    },
  );
}

module.exports = { Agent, main, nextServer };
