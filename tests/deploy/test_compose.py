"""docker-compose.yml: valid against the Compose Specification schema, and a
demo that the product can actually run (flags, ports, health, order)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from tests.deploy.helpers import (
    COMPOSE,
    DOCKERFILE,
    ROOT,
    VALKEY_CONF,
    dockerfile_stages,
    flag_values,
    host_port,
    known_settings,
    parse_cli,
    serve_argv,
    twistarena_commands,
)

#: The Compose Specification's JSON schema, vendored (see compose-spec.SOURCE.md).
SCHEMA = Path(__file__).with_name("compose-spec.json")


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return data


def services() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = compose()["services"]
    return found


def built_from_dockerfile(service: dict[str, Any]) -> bool:
    build = service.get("build")
    if isinstance(build, dict):
        return (ROOT / build.get("context", ".") / build.get("dockerfile", "Dockerfile")
                ).resolve() == DOCKERFILE.resolve()
    return False


def project_image() -> str:
    images = {s["image"] for s in services().values() if built_from_dockerfile(s)}
    assert len(images) == 1, f"one image name for the project build, got {images}"
    return images.pop()


def node_services() -> dict[str, dict[str, Any]]:
    """Services that run the image's entrypoint (`twistarena serve`)."""
    image = project_image()
    return {name: s for name, s in services().items()
            if s.get("image") == image and "entrypoint" not in s}


def node_argv(service: dict[str, Any]) -> list[str]:
    command = service.get("command", [])
    assert isinstance(command, list), "node commands use the list form"
    return serve_argv(command)


def test_validates_against_the_compose_spec_schema() -> None:
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.Draft201909Validator(schema)
    errors = sorted(validator.iter_errors(compose()), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


def test_schema_rejects_a_broken_file() -> None:
    """The vendored schema really constrains services (guards against an empty
    or truncated copy)."""
    validator = jsonschema.Draft201909Validator(json.loads(SCHEMA.read_text()))
    broken = {"services": {"node1": {"image": "x", "depends_on": {"valkey": {"condition": "up"}},
                                     "helthcheck": {}}}}
    assert len(list(validator.iter_errors(broken))) >= 2


def test_valkey_with_the_repository_config_and_a_volume() -> None:
    valkey = services()["valkey"]
    mounts = valkey["volumes"]
    conf = next(m for m in mounts if isinstance(m, str) and m.split(":")[0].endswith("valkey.conf"))
    source, target = conf.split(":")[:2]
    assert (ROOT / source).resolve() == VALKEY_CONF.resolve()
    assert target in valkey["command"], "valkey-server is started with that file"
    data_dir = re.search(r"^dir\s+(\S+)", VALKEY_CONF.read_text(), re.MULTILINE)
    assert data_dir
    named = [m for m in mounts if isinstance(m, str) and m.split(":")[1] == data_dir.group(1)]
    assert named and named[0].split(":")[0] in compose().get("volumes", {}), (
        "the append-only file lives on a named volume")
    assert "healthcheck" in valkey


def test_three_nodes_share_one_redis() -> None:
    nodes = node_services()
    assert len(nodes) == 3, sorted(nodes)
    urls = {u for s in nodes.values() for u in flag_values(node_argv(s), "--redis-url")}
    assert len(urls) == 1, urls
    host, port = host_port(urls.pop().removeprefix("redis://").split("/")[0])
    assert host in services(), f"--redis-url names a compose service, not {host}"
    assert port == 6379


def test_node_flags_exist_and_parse() -> None:
    for name, service in node_services().items():
        args = parse_cli(node_argv(service))
        assert args.command == "serve", name
        assert args.insecure or args.tls_cert, f"{name}: plaintext on 0.0.0.0 needs --insecure"


def test_each_node_has_its_own_id_and_advertises_its_service_name() -> None:
    ids = []
    for name, service in node_services().items():
        argv = node_argv(service)
        [node_id] = flag_values(argv, "--node-id")
        [advertise] = flag_values(argv, "--advertise")
        host, port = host_port(advertise)
        assert host in {name, service.get("hostname")}, f"{name} advertises {advertise}"
        assert port == known_settings(argv).port
        ids.append(node_id)
    assert len(set(ids)) == len(ids), ids


def test_stop_grace_period_covers_the_drain() -> None:
    for name, service in node_services().items():
        [drain] = flag_values(node_argv(service), "--drain-grace")
        grace = service["stop_grace_period"]
        seconds = int(re.fullmatch(r"(\d+)s", grace).group(1))  # type: ignore[union-attr]
        assert seconds > float(drain), f"{name}: stop_grace_period {grace} <= drain {drain}"


def test_nodes_are_health_checked_and_wait_for_valkey() -> None:
    script = dockerfile_stages()[-1].last("HEALTHCHECK").exec_form  # type: ignore[union-attr]
    assert script is not None
    for name, service in node_services().items():
        test = service["healthcheck"]["test"]
        assert test[0] == "CMD" and test[1:] == script, (
            f"{name}: the same gRPC health check as the image")
        address = test[-1]
        assert host_port(address)[1] == known_settings(node_argv(service)).port
        assert service["depends_on"]["valkey"]["condition"] == "service_healthy", name


def test_demo_is_reachable_from_the_host() -> None:
    published = []
    for name, service in node_services().items():
        port = known_settings(node_argv(service)).port
        for mapping in service.get("ports", []):
            parts = str(mapping).split(":")
            if int(parts[-1]) == port:
                published.append((name, parts))
    assert published, "a node's gRPC port is published on the host"
    for _, parts in published:
        assert len(parts) == 3 and parts[0] == "127.0.0.1", (
            "the plaintext demo is published on the host's loopback only")


#: The entrypoint of the services that run ``twistarena runner``.
RUNNER_ENTRYPOINT = ["twistarena", "runner"]


def runner_services() -> dict[str, dict[str, Any]]:
    """Services that run hosted agents' seats (``twistarena runner``)."""
    return {name: s for name, s in services().items()
            if s.get("image") == project_image() and s.get("entrypoint") == RUNNER_ENTRYPOINT}


def test_bots_play_every_game_through_the_nodes() -> None:
    from twistarena import engine

    bots = [s for s in services().values() if s.get("image") == project_image()
            and "entrypoint" in s and s["entrypoint"] != RUNNER_ENTRYPOINT]
    assert bots, "a bots service runs the CLI in a loop"
    nodes = node_services()
    games = set()
    for service in bots:
        for name in nodes:
            assert service["depends_on"][name]["condition"] == "service_healthy"
        script = "\n".join(service["command"] if isinstance(service["command"], list)
                           else [service["command"]])
        calls = twistarena_commands(script)
        assert calls, "the bots run `twistarena match create`"
        for argv in calls:
            args = parse_cli(argv)
            assert argv[:2] == ["match", "create"], argv
            info = engine.game(args.game)
            assert info.min_players <= args.players <= info.max_players, argv
            strategies = args.bots.split(",")
            assert len(strategies) == args.players, f"one bot per seat: {argv}"
            for address in args.server.split(","):
                host, port = host_port(address)
                assert host in nodes, f"--server {address}: not a node service"
                assert port == known_settings(node_argv(nodes[host])).port
            games.add(args.game)
    assert games == set(engine.GAME_IDS)


def test_admin_token_is_shared_by_nodes_and_bots() -> None:
    tokens = {s.get("environment", {}).get("TWISTARENA_ADMIN_TOKEN")
              for name, s in services().items()
              if s.get("image") == project_image() and name not in runner_services()}
    assert len(tokens) == 1 and None not in tokens, tokens


def test_runners_play_through_the_nodes_with_the_nodes_runner_token() -> None:
    runners = runner_services()
    assert runners, "a runner service plays hosted agents' seats"
    nodes = node_services()
    for service in runners.values():
        args = parse_cli(["runner", *service["command"]])
        for address in args.server.split(","):
            host, port = host_port(address)
            assert host in nodes, f"--server {address}: not a node service"
            assert port == known_settings(node_argv(nodes[host])).port
        assert args.sandbox == "bwrap", "runners run programs in the sandbox"
        assert str(args.cache_dir).startswith("/tmp"), "the cache is on the writable tmpfs"
        tokens = {s["environment"]["TWISTARENA_RUNNER_TOKEN"]
                  for s in [service, *nodes.values()]}
        assert len(tokens) == 1, tokens
