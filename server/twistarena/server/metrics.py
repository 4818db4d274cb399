"""Prometheus metrics of the service (served on --metrics-port)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, start_http_server

# The store counts its own appends and errors; one registry, re-exported here.
from twistarena.storage.metrics import APPEND_BATCH as APPEND_BATCH
from twistarena.storage.metrics import APPEND_LATENCY as APPEND_LATENCY
from twistarena.storage.metrics import ERRORS as ERRORS
from twistarena.storage.metrics import LoopCounter as LoopCounter
from twistarena.storage.metrics import LoopHistogram

LIVE_MATCHES = Gauge("twistarena_live_matches", "Matches with a referee on this node")
LEASES_HELD = Gauge("twistarena_lease_held",
                    "1 for each tournament and arena whose lease this node holds (it drives "
                    "them): which node holds which, summed over the nodes' metrics",
                    ["kind", "id"])
PLAY_STREAMS = Gauge("twistarena_play_streams", "Open Play streams holding a seat")
WATCH_STREAMS = Gauge("twistarena_watch_streams", "Open Watch streams")
MATCHES_CREATED = Counter("twistarena_matches_created_total", "Matches created")
MATCHES_ENDED = Counter("twistarena_matches_ended_total", "Matches ended", ["reason"])
DECISIONS = LoopCounter(
    "twistarena_decisions_total", "Decisions settled", ["how"]
)  # how: answer, timeout, house
ANSWERS_REJECTED = Counter("twistarena_answers_rejected_total", "In-band rejections", ["reason"])
DECISION_LATENCY = LoopHistogram(
    "twistarena_decision_latency_seconds",
    "From a decision request being sent to its answer being acknowledged",
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
STORE_LOSSES = Counter(
    "twistarena_store_losses_total",
    "Matches whose store lost acknowledged actions or their announced end, by what "
    "was done (rewind, void, end_restored)", ["policy"])
LOST_ACTIONS = Counter("twistarena_lost_actions_total",
                       "Acknowledged actions the store lost (detected)")
STORE_UP = Gauge("twistarena_store_up", "1 while the store answers, 0 while it does not")


#: Messages on the Play streams, counted per message (``bench service`` divides them
#: by its decisions).
PLAY_MESSAGES = LoopCounter(
    "twistarena_play_messages_total", "Messages on Play streams, by direction from the "
    "server (sent: ServerMessages, received: AgentMessages)", ["direction"])
PLAY_SENT = PLAY_MESSAGES.labels("sent")
PLAY_RECEIVED = PLAY_MESSAGES.labels("received")
REQUESTS_BUILT = LoopCounter(
    "twistarena_decision_requests_built_total",
    "DecisionRequests built (a request sent again is not rebuilt)").labels()

#: One DecisionRequest build in this many is timed.
TIME_EVERY = 8

REQUESTS_TIMED = LoopCounter(
    "twistarena_decision_requests_timed_total",
    f"DecisionRequests built whose CPU time was measured (one in {TIME_EVERY})").labels()
REQUEST_BUILD_SECONDS = LoopCounter(
    "twistarena_decision_request_build_seconds_total",
    "CPU time of the event loop building the timed DecisionRequests (observation, "
    "legal actions, encoding)").labels()


def serve_metrics(port: int, host: str = "127.0.0.1") -> int:
    """Start the /metrics HTTP endpoint in a background thread; returns the port."""
    server, _thread = start_http_server(port, addr=host)
    bound: int = server.server_address[1]
    return bound
