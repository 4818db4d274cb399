"""Train a Twisted policy against random play with REINFORCE, numpy only.

    python examples/twisted_reinforce.py     # 5 minutes; writes the weights file (below)
    twistarena evaluate --game twisted --players 2 \\
        --bots policy:examples/twisted_reinforce.py:policy,random --deals 200

The policy is linear: one logit per action of the game's action space,
``W @ tensor + b``, illegal actions masked out. It learns on the Gymnasium
environment (``twistarena/Twisted-v0``, one seat against the random house bot,
two players) from the final score margin over the opponent, with a running
baseline and Adam. ``policy(tensor, mask)`` below plays the trained weights
greedily: it is what ``twistarena evaluate --bots policy:...`` and
``twistarena bot --policy ...`` call. The weights file, written by training
and read by ``policy``, is ``$TWISTED_POLICY_WEIGHTS`` or else
``$XDG_DATA_HOME/twistarena/twisted_policy.npz`` (``~/.local/share/...``):
never inside the source tree.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import time
from typing import Any

import gymnasium
import numpy as np

DEFAULT_WEIGHTS = (pathlib.Path(os.environ.get("XDG_DATA_HOME")
                                or pathlib.Path.home() / ".local" / "share")
                   / "twistarena" / "twisted_policy.npz")
_loaded: dict[str, np.ndarray[Any, Any]] = {}


def weights_path() -> pathlib.Path:
    return pathlib.Path(os.environ.get("TWISTED_POLICY_WEIGHTS", DEFAULT_WEIGHTS))


def policy(tensor: np.ndarray[Any, Any], mask: np.ndarray[Any, Any]) -> int:
    """The trained policy: the legal index with the highest logit."""
    if not _loaded:
        with np.load(weights_path()) as data:
            _loaded.update(w=data["w"], b=data["b"])
    logits = _loaded["w"] @ tensor + _loaded["b"]
    return int(np.argmax(np.where(mask > 0, logits, -np.inf)))


class Adam:
    """Adam on a list of arrays (ascent: the gradients are of the expected return)."""

    def __init__(self, params: list[np.ndarray[Any, Any]], lr: float) -> None:
        self.params, self.lr, self.t = params, lr, 0
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def step(self, grads: list[np.ndarray[Any, Any]]) -> None:
        self.t += 1
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            mh = m / (1 - 0.9 ** self.t)
            vh = v / (1 - 0.999 ** self.t)
            p += self.lr * mh / (np.sqrt(vh) + 1e-8)


def train(seconds: float, out: pathlib.Path, seed: int = 0, batch: int = 16,
          lr: float = 0.01, max_episodes: int | None = None) -> dict[str, float]:
    """Train for ``seconds`` (or ``max_episodes``), save the weights to ``out``."""
    # "module:id": Gymnasium imports twistarena.rl, which registers the ids.
    env = gymnasium.make("twistarena.rl:twistarena/Twisted-v0", num_players=2, opponents="random",
                         reward="score")
    rng = np.random.default_rng(seed)
    size = env.observation_space["observation"].shape[0]  # type: ignore[index]
    actions = int(env.action_space.n)  # type: ignore[attr-defined]
    w = np.zeros((actions, size), np.float32)
    b = np.zeros(actions, np.float32)
    adam = Adam([w, b], lr)
    baseline, episodes, started = 0.0, 0, time.perf_counter()
    margins: list[float] = []
    last_report = started
    while time.perf_counter() - started < seconds and (max_episodes is None
                                                        or episodes < max_episodes):
        xs, grads_of_logits, advantages = [], [], []
        for _ in range(batch):
            obs, _ = env.reset(seed=int(rng.integers(2**62)))
            steps_x, steps_g = [], []
            done, info = False, dict[str, Any]()
            while not done:
                x, mask = obs["observation"], obs["action_mask"]
                logits = np.where(mask > 0, w @ x + b, -np.inf)
                p = np.exp(logits - logits.max())
                p /= p.sum()
                a = int(rng.choice(actions, p=p))
                g = -p
                g[a] += 1.0  # d log p(a) / d logits
                steps_x.append(x)
                steps_g.append(g)
                obs, _, done, _, info = env.step(a)
            scores = info["scores"]
            margin = (scores[0] - scores[1]) / 10  # the learner plays seat 0
            margins.append(margin)
            episodes += 1
            xs += steps_x
            grads_of_logits += steps_g
            advantages += [margin - baseline] * len(steps_x)
            baseline += 0.01 * (margin - baseline)
        adv = np.asarray(advantages, np.float32)[:, None]
        g_logits = np.asarray(grads_of_logits, np.float32) * adv / batch
        adam.step([g_logits.T @ np.asarray(xs, np.float32), g_logits.sum(axis=0)])
        if time.perf_counter() - last_report > 30:
            last_report = time.perf_counter()
            recent = margins[-500:]
            print(f"{last_report - started:6.0f} s  {episodes:6d} episodes"
                  f"  mean margin over random (last {len(recent)}): {np.mean(recent) * 10:+.1f}",
                  flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, w=w, b=b)
    recent = margins[-500:]
    return {"episodes": episodes, "seconds": round(time.perf_counter() - started, 1),
            "mean_margin_last_500": round(float(np.mean(recent)) * 10, 2) if recent else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=300,
                        help="training time budget (default 300: 5 minutes)")
    parser.add_argument("--episodes", type=int, default=None, help="stop after this many")
    parser.add_argument("--out", type=pathlib.Path, default=weights_path(),
                        help="weights file (default $TWISTED_POLICY_WEIGHTS, else"
                             f" {DEFAULT_WEIGHTS})")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(json.dumps(train(args.seconds, args.out, args.seed, max_episodes=args.episodes)))


if __name__ == "__main__":
    main()
