"""Every Redis key twistarena uses, and the hash tags that group them.

A Lua script may only touch keys of one cluster slot, so keys that one script
(or one MULTI) uses together share a hash tag, the part in ``{...}``:

``{m:<match>}``        one match: its metadata, action log and lease
                       (the append script checks the lease and writes the log)
``{t:<tournament>}``   one tournament: metadata, round plans, results, lease
``{twistarena}``       node membership, node inboxes and the match lease index
                       (the heartbeat script reads and writes them together)
``{agents}``           agent accounts, their inboxes, the rating queue
                       (a rating update WATCHes several agents at once)
``{mmq:<game>:<n>}``   one matchmaking queue (enqueue and pop are one script each)
``{a:<arena>}``        one arena's ratings, board, histories and match indexes
                       (a result is rated in one WATCH/MULTI)
``{runners}``          hosted seats waiting for a runner or held by one, runner
                       tokens and sessions (taking a seat is one script)
``{av:<agent>}``       one agent's hosted versions, the active one and their stats
                       (a stats report is one script over them)

The untagged indexes (``twistarena:matches``, ``twistarena:live``,
``twistarena:tournaments``, ``twistarena:tournaments:live``) and the
archives (``twistarena:archive:<sha256>``) are only ever used alone. Key
names are stored data: changing one orphans what a running arena holds, so
they stay as they are.
"""

from __future__ import annotations


class KeyOf:
    """A key in its owner's own tag, ``{<kind>:<owner id>}:<part>`` (a tournament's, an
    arena's keys): such keys differ only in their part, so each is declared as one
    line with its comment."""

    def __init__(self, kind: str, part: str) -> None:
        self.kind = kind
        self.part = part

    def __call__(self, owner_id: str) -> str:
        return f"{{{self.kind}:{owner_id}}}:{self.part}"


class KeyIn:
    """A key per id in a tag shared by all ids, ``<tag>:<part>:<id>`` (a node's, an
    agent's, a runner session's keys)."""

    def __init__(self, tag: str, part: str) -> None:
        self.tag = tag
        self.part = part

    def __call__(self, member_id: str) -> str:
        return f"{self.tag}:{self.part}:{member_id}"

# -- matches: tag {m:<id>} -------------------------------------------------------


def match_tag(match_id: str) -> str:
    """The hash tag of a match's keys: all of them land in one cluster slot."""
    return f"{{m:{match_id}}}"


def match_meta(match_id: str) -> str:
    """Hash: ``spec`` (MatchOptions bytes), ``seed``, ``status``, ``created_ms``,
    ``game_id``, ``tok:<seat>`` (sha256 of the seat token), ``joined:<seat>``,
    ``away:<seat>`` (ms the seat's stream was seen gone while the match ran, 0:
    back), ``hosted:<seat>`` (the SeatAssignment bytes of a seat the runners play),
    ``rewound:<seat>`` (the Rewound bytes owed to a seat away when the match was
    rewound; empty: none), ``rewound`` (the latest Rewound bytes, for spectators),
    ``result`` (MatchResult bytes)."""
    return f"{{m:{match_id}}}:meta"


def match_log(match_id: str) -> str:
    """List: the append-only action log, one ``seat,action,timeout`` entry each."""
    return f"{{m:{match_id}}}:log"


def match_sync(match_id: str) -> str:
    """String, expiring within a minute: the write in the match's slot that a
    cluster's WAITAOF for the match's end covers (``Matches.shard_durable``)."""
    return f"{match_tag(match_id)}:sync"


def match_lease(match_id: str) -> str:
    """Hash: the lease of the node that may append (see ``leases``)."""
    return f"{{m:{match_id}}}:owner"


#: Sorted set: every match id by creation time (ListMatches).
MATCH_INDEX = "twistarena:matches"
#: Set: unfinished match ids (recovery at startup).
LIVE_MATCHES = "twistarena:live"
#: Counter written by ``Store.sync`` so that its WAIT covers a write of its connection.
SYNC_KEY = "twistarena:sync"

# -- nodes: tag {twistarena} -----------------------------------------------------

CLUSTER_TAG = "{twistarena}"
#: Sorted set: live match id -> its lease expiry (ms, Redis TIME; 0: nobody's).
MATCH_LEASES = f"{CLUSTER_TAG}:leases"
#: Sorted set: node id -> its last heartbeat (ms, Redis TIME).
NODES = f"{CLUSTER_TAG}:nodes"
#: Hash: node id -> ``load|address``.
NODE_INFO = f"{CLUSTER_TAG}:nodeinfo"
#: String with a TTL of three heartbeats: the node's advertised address.
node_alive = KeyIn(CLUSTER_TAG, "node")
#: List: ids of matches handed to this node (created elsewhere or drained).
node_inbox = KeyIn(CLUSTER_TAG, "inbox")


# -- agents: tag {agents} --------------------------------------------------------

AGENTS_TAG = "{agents}"
#: Hash: sha256 of an api token -> agent id.
AGENT_TOKENS = f"{AGENTS_TAG}:tokens"
#: Hash: agent id -> ``<game>:<players>:<ms>`` of the Queue stream holding it
#: (``agents.QueueHold``).
AGENT_QUEUED = f"{AGENTS_TAG}:queued"
#: Sorted set: agent id -> creation ms, for ListAgents.
AGENT_INDEX = f"{AGENTS_TAG}:index"
#: Hash: ``name``, ``created_ms``.
agent = KeyIn(AGENTS_TAG, "agent")
#: List: MatchAssigned messages waiting for the agent's Queue stream.
agent_inbox = KeyIn(AGENTS_TAG, "inbox")


# -- matchmaking queues: tag {mmq:<game>:<n>} -----------------------------------

#: The parts of one queue, in the order its scripts take them as KEYS.
QUEUE_PARTS = ("order", "alive", "fill", "rating", "bot")


def queue(game_id: str, players: int) -> list[str]:
    """``order`` (agent -> enqueue ms), ``alive`` (agent -> vouched until ms),
    ``fill`` (agent -> when house bots may fill), ``rating`` (agent -> mu),
    ``bot`` (agent -> house bot strategy)."""
    tag = f"{{mmq:{game_id}:{players}}}"
    return [f"{tag}:{part}" for part in QUEUE_PARTS]


# -- runners: tag {runners} ------------------------------------------------------

RUNNERS_TAG = "{runners}"
#: List: seat keys (``<match>:<seat>``) of hosted seats waiting for a runner.
RUNNER_PENDING = f"{RUNNERS_TAG}:pending"
#: Hash: seat key -> SeatAssignment bytes (and ``<seat key>#handoffs`` -> count).
RUNNER_SEATS = f"{RUNNERS_TAG}:seats"
#: Sorted set: seat key -> until when (ms) its runner holds it without a heartbeat.
RUNNER_HELD = f"{RUNNERS_TAG}:held"
#: Hash: seat key -> the runner id that holds it.
RUNNER_HOLDER = f"{RUNNERS_TAG}:holder"
#: Hash: minted runner token hash -> its name.
RUNNER_TOKENS = f"{RUNNERS_TAG}:tokens"
#: String with a TTL: a runner session key's hash -> the runner id.
runner_session = KeyIn(RUNNERS_TAG, "session")
#: String with a TTL: the seat's latest hand-out (``Join.handout``), which fences
#: off the runners that had it before on every node.
runner_handout = KeyIn(RUNNERS_TAG, "handout")


def runner_played(seat_key: str, runner_id: str) -> str:
    """String with a TTL: the version a runner played a seat with, and its hand-out,
    until it reports."""
    return f"{RUNNERS_TAG}:played:{seat_key}:{runner_id}"


# -- tournaments: tag {t:<id>} ---------------------------------------------------
#: Hash: ``spec`` (TournamentSpec bytes), ``status``, ``created_ms``, ``detail``.
tournament_meta = KeyOf("t", "meta")
#: Hash: round -> JSON ``{"tables": [...], "byes": [...]}``.
tournament_rounds = KeyOf("t", "rounds")
#: Hash: ``<round>:<index>`` -> GameResult JSON.
tournament_results = KeyOf("t", "results")
#: Hash: the lease of the node driving the tournament (see ``leases``).
tournament_lease = KeyOf("t", "owner")


#: Sorted set: tournament id by creation time.
TOURNAMENT_INDEX = "twistarena:tournaments"
#: Set: unfinished tournament ids.
LIVE_TOURNAMENTS = "twistarena:tournaments:live"


# -- arenas: tag {a:<arena>} ------------------------------------------------------

#: Hash: arena id -> its ``Arena`` message (spec and status).
ARENAS = "twistarena:arenas"


#: Hash: player key (``AGENT@VERSION``) -> its rating row (JSON).
arena_ratings = KeyOf("a", "ratings")
#: Sorted set: the player shown for each agent -> mu - 3 sigma.
arena_board = KeyOf("a", "board")
#: Hash: agent id -> the version it last played in the arena.
arena_current = KeyOf("a", "current")
#: Set: match ids whose result the arena has applied.
arena_rated = KeyOf("a", "rated")
#: Sorted set: the arena's rated match ids -> end ms.
arena_matches = KeyOf("a", "matches")
#: Hash: the lease of the node scheduling the arena (see ``leases``).
arena_lease = KeyOf("a", "owner")
#: Set: agent ids enrolled in the arena.
arena_enrolled = KeyOf("a", "enrolled")
#: Hash: the arena's unrated matches -> their player keys per seat (JSON).
arena_live = KeyOf("a", "live")
#: Hash: a rated match id -> its player keys and places per seat (JSON).
arena_tables = KeyOf("a", "tables")


def arena_history(arena_id: str, player: str) -> str:
    """List: ``[mu, sigma, match id]`` after each rated match of the player."""
    return KeyOf("a", f"history:{player}")(arena_id)


def arena_agent_matches(arena_id: str, agent_id: str) -> str:
    """Sorted set: one agent's rated match ids in the arena -> end ms."""
    return KeyOf("a", f"agent:{agent_id}")(arena_id)


# -- hosted versions: tag {av:<agent>}, and the archives by content -------------


def agent_versions(agent_id: str) -> str:
    """Sorted set: the agent's version ids by creation time (ms)."""
    return f"{{av:{agent_id}}}:versions"


def agent_version(agent_id: str, version_id: str) -> str:
    """Hash: one immutable version (``content_hash``, ``entry``, ``build``,
    ``build_log``, ``size``, ``unpacked``, ``files``, ``created_ms``)."""
    return f"{{av:{agent_id}}}:version:{version_id}"


def agent_active_version(agent_id: str) -> str:
    """String: the id of the version the agent's hosted seats run."""
    return f"{{av:{agent_id}}}:active"


def version_stats(agent_id: str) -> list[str]:
    """The per-version stats of an agent, as the stats script takes them as KEYS:
    ``counts`` (hash ``<version>:<counter>`` -> total), ``cpumax`` (sorted set
    version -> the slowest decision's CPU ms), ``seen`` (set of reports already
    counted, ``<version>:<report id>``)."""
    tag = f"{{av:{agent_id}}}"
    return [f"{tag}:counts", f"{tag}:cpumax", f"{tag}:seen"]


def version_failures(agent_id: str, version_id: str) -> str:
    """List: the version's most recent failures, newest first (JSON each)."""
    return f"{{av:{agent_id}}}:failures:{version_id}"


def seat_logs(agent_id: str) -> tuple[str, str]:
    """The agent's hosted seats' per-decision logs: a hash ``<match>:<seat>`` ->
    JSON, and a sorted set of the same fields by the time they were stored (the
    oldest beyond the cap are dropped from both)."""
    tag = f"{{av:{agent_id}}}"
    return f"{tag}:seatlogs", f"{tag}:seatlogs:order"


def agent_version_seq(agent_id: str) -> str:
    """String: the number the agent's last stored version got (1, 2, ...); a
    version keeps its number when older ones are deleted (arenas rate by it)."""
    return f"{{av:{agent_id}}}:seq"


def agent_archive_bytes(agent_id: str) -> str:
    """String: packed bytes of the agent's stored versions, all together."""
    return f"{{av:{agent_id}}}:bytes"


def version_playing(agent_id: str, version_id: str) -> str:
    """Sorted set: the seats (``<match>:<seat>``) handed to runners with this
    version -> until when (ms) they may still be playing it."""
    return f"{{av:{agent_id}}}:playing:{version_id}"


def archive(content_hash: str) -> str:
    """String: a packed version archive, stored once per sha256 of its bytes and
    never changed (versions of any agent with the same bytes share it)."""
    return f"twistarena:archive:{content_hash}"


def archive_refs(content_hash: str) -> str:
    """Set: the versions (``<agent>/<version id>``) that use the archive; when the
    last goes, the archive goes. Its tag is the archive's whole key: one slot."""
    return f"{{{archive(content_hash)}}}:refs"


#: String: packed bytes of every archive stored (the whole store's cap counts them).
ARCHIVE_BYTES = "twistarena:archives:bytes"
