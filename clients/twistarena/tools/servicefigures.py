"""What ``bench service`` measures, apart from how: the message sizes, the
decision timing of a window, the server's counters, one run's figures
(``Throughput``) and a whole call's (``Report``), with the ratios of the
node's CPU per decision to the yardsticks' (``cpu_ratios``)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import astuple, dataclass, field
from typing import Any

from twistarena.clients.sdk import Agent


@dataclass(slots=True)
class Sizes:
    """Mean serialized sizes (bytes) of the real messages of one match."""

    decision: int
    answer: int
    accepted: int

    def to_json(self) -> dict[str, int]:
        return {"decision_request": self.decision, "answer": self.answer,
                "answer_accepted": self.accepted}


class Timing:
    """Counts decisions and overhead samples of a measurement window, per match."""

    def __init__(self) -> None:
        self.window_open = False
        self.decisions = 0
        self.samples: list[float] = []
        self._last_answer: dict[Any, float] = {}

    def decision(self, key: Any, t: float) -> None:
        sent = self._last_answer.pop(key, None)
        if self.window_open:
            self.decisions += 1
            if sent is not None:
                self.samples.append(t - sent)

    def answer(self, key: Any, t: float) -> None:
        self._last_answer[key] = t


class AgentTracer:
    """The SDK's timing hooks, keyed by match."""

    def __init__(self, timing: Timing) -> None:
        self.timing = timing

    def decision_received(self, agent: Agent, decision_id: int, t: float) -> None:
        self.timing.decision(agent.match_id, t)

    def answer_sent(self, agent: Agent, decision_id: int, t: float) -> None:
        self.timing.answer(agent.match_id, t)

    def accepted(self, agent: Agent, decision_id: int, t: float) -> None:
        return None


@dataclass(slots=True)
class ServerCounters:
    """The server's own counters of its Play streams, summed over its nodes."""

    sent: float = 0.0
    received: float = 0.0
    requests_built: float = 0.0
    #: The builds the server timed (one in several), and their CPU time.
    requests_timed: float = 0.0
    request_build_s: float = 0.0

    def minus(self, before: ServerCounters) -> ServerCounters:
        return ServerCounters(*(a - b for a, b in zip(astuple(self), astuple(before),
                                                      strict=True)))

    def plus(self, other: ServerCounters) -> ServerCounters:
        return ServerCounters(*(a + b for a, b in zip(astuple(self), astuple(other),
                                                      strict=True)))


#: Prometheus sample (name and labels as exported) -> ``ServerCounters`` field.
COUNTER_SAMPLES = {
    'twistarena_play_messages_total{direction="sent"}': "sent",
    'twistarena_play_messages_total{direction="received"}': "received",
    "twistarena_decision_requests_built_total": "requests_built",
    "twistarena_decision_requests_timed_total": "requests_timed",
    "twistarena_decision_request_build_seconds_total": "request_build_s",
}


def read_counters(ports: Sequence[int]) -> ServerCounters:
    """Scrape the counters from each node's metrics endpoint (blocking)."""
    import urllib.request

    out = ServerCounters()
    for port in ports:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as page:
            text = page.read().decode()
        for line in text.splitlines():
            sample, _, value = line.rpartition(" ")
            name = COUNTER_SAMPLES.get(sample)
            if name is not None:
                setattr(out, name, getattr(out, name) + float(value))
    return out


@dataclass(slots=True)
class Throughput:
    """One measured run (bare gRPC or the real service)."""

    label: str
    decisions: int
    seconds: float
    server_cpu_s: float
    helper_cpu_s: float
    client_cpu_s: float
    samples: list[float] = field(default_factory=list)
    matches_finished: int = 0
    #: Matches whose agents failed (a stream cut by the server), the run's whole length.
    matches_failed: int = 0
    #: System calls (reads and writes) of the server's processes, and of its helper.
    server_syscalls: int = 0
    helper_syscalls: int = 0
    #: The server's own counters over the window (zero for the yardsticks).
    counters: ServerCounters = field(default_factory=ServerCounters)
    #: The server's CPU per match apart from its decisions (µs; 0: not measured).
    match_cpu_us: float = 0.0
    #: Decisions/s of each measured window, in order (one per round, see ``run``).
    windows: list[float] = field(default_factory=list)
    #: The server's CPU per decision (µs) in each of those windows.
    window_server_us: list[float] = field(default_factory=list)

    def plus(self, other: Throughput) -> Throughput:
        """This run and a later window of the same run, as one measurement."""
        return Throughput(
            self.label, self.decisions + other.decisions, self.seconds + other.seconds,
            self.server_cpu_s + other.server_cpu_s, self.helper_cpu_s + other.helper_cpu_s,
            self.client_cpu_s + other.client_cpu_s, self.samples + other.samples,
            self.matches_finished + other.matches_finished,
            self.matches_failed + other.matches_failed,
            self.server_syscalls + other.server_syscalls,
            self.helper_syscalls + other.helper_syscalls,
            self.counters.plus(other.counters), self.match_cpu_us,
            self.windows + other.windows, self.window_server_us + other.window_server_us)

    @property
    def per_s(self) -> float:
        return self.decisions / self.seconds if self.seconds else 0.0

    def us_per(self, cpu: float) -> float:
        return 1e6 * cpu / self.decisions if self.decisions else 0.0

    def per_decision(self, count: float) -> float:
        return count / self.decisions if self.decisions else 0.0

    @property
    def request_build_us(self) -> float:
        timed = self.counters.requests_timed
        return 1e6 * self.counters.request_build_s / timed if timed else 0.0

    @property
    def server_us_net(self) -> float:
        """Server CPU per decision without what its matches cost once each."""
        if not self.decisions:
            return 0.0
        fixed = self.match_cpu_us * 1e-6 * self.matches_finished
        return 1e6 * max(0.0, self.server_cpu_s - fixed) / self.decisions

    def percentile_ms(self, q: float) -> float:
        if not self.samples:
            return 0.0
        ordered = sorted(self.samples)
        return 1e3 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def to_json(self) -> dict[str, Any]:
        return {
            "decisions": self.decisions, "seconds": round(self.seconds, 3),
            "decisions_per_s": round(self.per_s, 1),
            "server_cpu_us_per_decision": round(self.us_per(self.server_cpu_s), 1),
            "valkey_cpu_us_per_decision": round(self.us_per(self.helper_cpu_s), 1),
            "client_cpu_us_per_decision": round(self.us_per(self.client_cpu_s), 1),
            "overhead_p50_ms": round(self.percentile_ms(0.50), 3),
            "overhead_p99_ms": round(self.percentile_ms(0.99), 3),
            "overhead_samples": len(self.samples),
            "matches_finished": self.matches_finished,
            "matches_failed": self.matches_failed,
            "server_syscalls_per_decision": round(self.server_syscalls / self.decisions, 3)
            if self.decisions else 0.0,
            "valkey_syscalls_per_decision": round(self.helper_syscalls / self.decisions, 3)
            if self.decisions else 0.0,
            "messages_per_decision_sent": round(self.per_decision(self.counters.sent), 3),
            "messages_per_decision_received": round(
                self.per_decision(self.counters.received), 3),
            "request_build_us": round(self.request_build_us, 1),
            "decisions_per_s_by_window": [round(w, 1) for w in self.windows],
            "server_cpu_us_per_decision_by_window": [round(w, 1)
                                                     for w in self.window_server_us],
            **({"server_cpu_us_per_decision_net": round(self.server_us_net, 1)}
               if self.match_cpu_us else {}),
        }


#: Report attribute -> its name in the JSON line
JSON_NAMES = {"raw": "bare_grpc", "engine_only": "grpc_engine_only", "real": "service",
              "sdk": "service_sdk_agents"}

#: The most server CPU per decision that the node may spend over the bare server's:
#: with the engine alone, and as a whole service with protocol bots (its events
#: taken, ``--events``, for the goal to apply).
CPU_GOALS = {"engine_only": 1.25, "real": 1.7}


@dataclass(slots=True)
class Report:
    """Everything one ``bench service`` run measured."""

    config: dict[str, Any]
    sizes: Sizes | None = None
    raw: Throughput | None = None
    engine_only: Throughput | None = None
    real: Throughput | None = None
    sdk: Throughput | None = None
    matches: Throughput | None = None
    live: dict[str, Any] | None = None

    def cpu_ratios(self) -> dict[str, float]:
        """Report attribute -> the median over the rounds of its server CPU per
        decision over bare gRPC's in the same round (``CPU_GOALS`` says the goals).

        The runs of one round follow each other within seconds, so a machine
        shared with other work, whose speed changes from minute to minute, weighs
        alike on both sides of each round's ratio; the median leaves out the
        rounds in which it jumped in between. A round in which either run made no
        decision (a yardstick still connecting on a machine that busy) is left out."""
        return {key: statistics.median(ratios) for key, ratios in self.round_ratios().items()
                if ratios}

    def round_ratios(self) -> dict[str, list[float]]:
        """Report attribute -> its server CPU per decision over bare gRPC's, per round."""
        if self.raw is None:
            return {}
        bare = self.raw.window_server_us
        out: dict[str, list[float]] = {}
        for key in ("engine_only", "real", "sdk"):
            run: Throughput | None = getattr(self, key)
            if run is not None:
                out[key] = [ours / theirs for ours, theirs in
                            zip(run.window_server_us, bare, strict=False)
                            if ours > 0 and theirs > 0]
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"config": self.config}
        if self.sizes is not None:
            out["message_bytes"] = self.sizes.to_json()
        if self.raw is not None:
            out["bare_grpc"] = self.raw.to_json()
        bare = self.raw.per_s if self.raw is not None else 0.0
        for key, run in ((JSON_NAMES["engine_only"], self.engine_only),
                         (JSON_NAMES["real"], self.real), (JSON_NAMES["sdk"], self.sdk)):
            if run is not None:
                out[key] = run.to_json()
                if bare:
                    out[f"{key}_to_bare_ratio"] = round(run.per_s / bare, 3)
        for key, ratios in self.round_ratios().items():
            if ratios:
                out[f"{JSON_NAMES[key]}_server_cpu_to_bare_ratio"] = round(
                    statistics.median(ratios), 3)
                out[f"{JSON_NAMES[key]}_server_cpu_rounds_compared"] = len(ratios)
        if self.matches is not None:
            costs = self.matches
            out["match_costs"] = {
                "matches": costs.matches_finished, "seconds": round(costs.seconds, 3),
                "matches_failed": costs.matches_failed,
                "server_cpu_us_per_match": round(costs.match_cpu_us, 1),
                "valkey_cpu_us_per_match": round(
                    1e6 * costs.helper_cpu_s / costs.matches_finished, 1)
                if costs.matches_finished else 0.0,
                "messages_per_match_sent": round(
                    costs.counters.sent / costs.matches_finished, 2)
                if costs.matches_finished else 0.0,
            }
        if self.live is not None:
            out["live"] = self.live
        return out
