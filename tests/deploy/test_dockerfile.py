"""deploy/Dockerfile and .dockerignore: slim multi-stage build, non-root,
health-checked, running the `twistarena serve` the CLI really has."""

from __future__ import annotations

from tests.deploy.helpers import (
    DOCKERFILE,
    HEALTHCHECK,
    ROOT,
    build_context_includes,
    dockerfile_stages,
    dockerignore_rules,
    flag_values,
    parse_cli,
    serve_argv,
    shell_commands,
)

BASE = "python:3.11-slim"


def test_multi_stage_on_python_slim() -> None:
    stages = dockerfile_stages()
    assert len(stages) >= 2, "build a wheel in one stage, run from another"
    assert all(s.base == BASE for s in stages), [s.base for s in stages]
    build = stages[0]
    runs = " ".join(i.text for i in build.all("RUN"))
    assert "pip wheel" in runs and "venv" in runs, "the build stage makes a wheel into a venv"


def test_runtime_stage_copies_only_the_venv_and_the_health_check() -> None:
    stages = dockerfile_stages()
    final, build = stages[-1], stages[0]
    copies = final.all("COPY") + final.all("ADD")
    assert copies, "the runtime stage copies the venv from the build stage"
    for ins in copies:
        assert ins.options.get("from") == build.name, (
            f"line {ins.line}: the runtime stage copies only from the build stage: {ins.text}")
    assert any("/opt/twistarena" in ins.text for ins in copies)


def test_runs_as_a_numeric_non_root_user() -> None:
    final = dockerfile_stages()[-1]
    user = final.last("USER")
    assert user is not None, "the runtime stage sets USER"
    uid, _, gid = user.text.partition(":")
    assert uid.isdigit() and int(uid) != 0, f"USER must be a numeric non-root uid: {user.text}"
    assert not gid or (gid.isdigit() and int(gid) != 0), user.text
    # Nothing after USER switches back to root.
    after = final.instructions[final.instructions.index(user) + 1:]
    assert not [i for i in after if i.keyword == "USER"]


def test_healthcheck_asks_grpc_health() -> None:
    final = dockerfile_stages()[-1]
    check = final.last("HEALTHCHECK")
    assert check is not None, "the runtime stage has a HEALTHCHECK"
    assert check.after_options.startswith("CMD "), f"HEALTHCHECK runs a command: {check.text}"
    argv = check.exec_form
    assert argv is not None, f"HEALTHCHECK CMD uses the exec form: {check.text}"
    script = next(a for a in argv if a.endswith(".py"))
    copied = " ".join(i.text for s in dockerfile_stages() for i in s.all("COPY"))
    assert f"deploy/{HEALTHCHECK.name} {script}" in copied, (
        f"{script} is copied into the image from deploy/{HEALTHCHECK.name}")
    assert "grpc_health" in HEALTHCHECK.read_text()
    address = argv[-1]
    args = parse_cli(serve_argv())
    assert address.endswith(f":{args.port}"), "the check targets the gRPC port"


def test_entrypoint_is_serve_on_all_interfaces_and_parses() -> None:
    argv = serve_argv()
    assert flag_values(argv, "--host") == ["0.0.0.0"]
    args = parse_cli(argv)
    assert args.command == "serve" and args.host == "0.0.0.0"
    assert args.metrics_port, "metrics are served on a fixed port"
    # Without TLS or --insecure the server refuses to start on 0.0.0.0: the
    # operator must choose, and the file tells how.
    text = DOCKERFILE.read_text()
    assert "--insecure" in text and "--tls-cert" in text
    assert not args.insecure, "plaintext is an explicit choice at run time, not baked in"


def test_exposes_the_grpc_and_metrics_ports() -> None:
    final = dockerfile_stages()[-1]
    exposed = {int(p.split("/")[0]) for ins in final.all("EXPOSE") for p in ins.text.split()}
    args = parse_cli(serve_argv())
    assert {args.port, args.metrics_port} <= exposed, exposed


def test_dockerignore_admits_what_the_build_copies_and_nothing_else() -> None:
    rules = dockerignore_rules()
    sources = []
    for stage in dockerfile_stages():
        for ins in stage.all("COPY"):
            if "from" in ins.options:
                continue
            words = [w for w in ins.text.split() if not w.startswith("--")]
            sources += words[:-1]
    assert sources
    for source in sources:
        path = ROOT / source
        assert path.exists(), f"COPY {source}: no such file in the repository"
        files = [path] if path.is_file() else [p for p in path.rglob("*.py")
                                               if "__pycache__" not in p.parts][:50]
        assert files, source
        for f in files:
            rel = f.relative_to(ROOT).as_posix()
            assert build_context_includes(rel, rules), f".dockerignore leaves out {rel}"
    for private in (".venv/bin/python", ".git/HEAD", "tests/conftest.py", ".env",
                    "engine/twistarena/engine/__pycache__/core.cpython-311.pyc",
                    "twistarena.egg-info/PKG-INFO", "docker-compose.yml"):
        assert not build_context_includes(private, rules), f".dockerignore lets in {private}"


def test_runtime_stage_installs_the_sandbox() -> None:
    """Submitted programs run in bubblewrap (Debian's package)."""
    final = dockerfile_stages()[-1]
    installs = [shell_commands(i.text) for i in final.all("RUN")]
    assert any({"apt-get", "install", "bubblewrap"} <= set(c)
               for commands in installs for c in commands), installs
