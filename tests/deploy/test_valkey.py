"""deploy/valkey/valkey.conf: a real Valkey server starts with it and runs with
the durability settings the documentation promises."""

from __future__ import annotations

import asyncio
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.deploy.helpers import DEPLOY, VALKEY_CONF
from tests.support.valkey import free_port, valkey_binary
from tests.support.waiting import wait_until


@pytest.fixture
def configured(tmp_path: Path) -> Iterator[redis.Redis]:
    """Valkey started from the repository's valkey.conf; only the data dir and
    the listening address are moved to this test's own."""
    conf = VALKEY_CONF.read_text()
    conf, count = re.subn(r"^dir\s+\S+", f"dir {tmp_path}", conf, flags=re.MULTILINE)
    assert count == 1, "valkey.conf sets dir once"
    path = tmp_path / "valkey.conf"
    path.write_text(conf)
    port = free_port()
    log = tmp_path / "out.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(valkey_binary()), str(path), "--bind", "127.0.0.1",
                                 "--port", str(port)], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    client = redis.Redis(port=port, decode_responses=True)
    try:

        def answers() -> bool:
            assert proc.poll() is None, f"valkey refused valkey.conf:\n{log.read_text()[-2000:]}"
            try:
                return bool(client.ping())
            except redis.ConnectionError:
                return False

        asyncio.run(wait_until(answers, "valkey answers with valkey.conf", timeout=15))
        yield client
    finally:
        client.close()
        proc.terminate()
        proc.wait(10)


def test_valkey_runs_with_the_durability_settings(configured: redis.Redis) -> None:
    config = configured.config_get("*")
    assert config["appendonly"] == "yes"
    assert config["appendfsync"] == "everysec"
    assert config["no-appendfsync-on-rewrite"] == "no"
    assert config["maxmemory-policy"] == "noeviction"
    assert int(config["maxmemory"]) > 0
    assert config["aof-load-truncated"] == "yes"
    assert config["save"], "RDB snapshots as a second copy"


def test_writes_land_in_the_append_only_file(configured: redis.Redis, tmp_path: Path) -> None:
    configured.rpush("{m:test}:log", "action-1")
    configured.execute_command("WAITAOF", 1, 0, 2000)
    aof_dir = tmp_path / configured.config_get("appenddirname")["appenddirname"]
    text = b"".join(p.read_bytes() for p in aof_dir.glob("*.aof"))
    assert b"action-1" in text


def test_readme_documents_every_fsync_policy() -> None:
    readme = (DEPLOY / "README.md").read_text()
    conf = VALKEY_CONF.read_text()
    for policy in ("always", "everysec", "no"):
        assert f"appendfsync {policy}" in conf
        assert f"appendfsync {policy}" in readme
    for command in ("WAIT", "WAITAOF"):
        assert command in conf and command in readme
