"""Readers for the deployment files: Dockerfile, .dockerignore, YAML, shell lines,
and the ``twistarena`` command line they run."""

from __future__ import annotations

import argparse
import json
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DOCKERFILE = DEPLOY / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
KUBERNETES = DEPLOY / "kubernetes"
VALKEY_CONF = DEPLOY / "valkey" / "valkey.conf"
COMPOSE = ROOT / "docker-compose.yml"
HEALTHCHECK = DEPLOY / "healthcheck.py"


# -- the twistarena command line -------------------------------------------------


def cli_parser() -> argparse.ArgumentParser:
    from twistarena.clients.cli import build_parser

    return build_parser()


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def command_parser(argv: Sequence[str]) -> tuple[list[str], argparse.ArgumentParser]:
    """The (sub)command words at the start of ``argv`` and the parser of the last one."""
    parser = cli_parser()
    words: list[str] = []
    for word in argv:
        choices = _subcommands(parser)
        if word not in choices:
            break
        parser = choices[word]
        words.append(word)
    return words, parser


def unknown_flags(argv: Sequence[str]) -> list[str]:
    """The ``--flags`` in a ``twistarena ...`` argv that its subcommand does not define."""
    words, parser = command_parser(argv)
    known = set(parser._option_string_actions)
    return [a.split("=", 1)[0] for a in argv[len(words):]
            if a.startswith("-") and a.split("=", 1)[0] not in known]


def parse_cli(argv: Sequence[str]) -> argparse.Namespace:
    """Parse a full ``twistarena ...`` argv (without the program name), or fail
    the test naming the flags the CLI lacks."""
    argv = list(argv)
    words, _ = command_parser(argv)
    missing = unknown_flags(argv)
    assert not missing, f"`twistarena {' '.join(words)}` has no flag(s) {missing}: {argv}"
    try:
        return cli_parser().parse_args(argv)
    except SystemExit as exit_:
        raise AssertionError(f"`twistarena {' '.join(argv)}` does not parse "
                             f"(argparse exit {exit_.code})") from None


def known_settings(argv: Sequence[str]) -> argparse.Namespace:
    """The values of the flags the CLI knows (ports, host...), ignoring the others;
    tests that need one setting use this, while one strict test per file
    (``parse_cli``) fails on any flag the CLI lacks."""
    words, parser = command_parser(argv)
    args, _ = parser.parse_known_args(list(argv)[len(words):])
    return args


def flag_values(args: Sequence[str], flag: str) -> list[str]:
    """Every value given to ``flag`` (``--flag value`` or ``--flag=value``)."""
    values = []
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            values.append(args[i + 1])
        elif arg.startswith(flag + "="):
            values.append(arg[len(flag) + 1:])
    return values


def host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


# -- shell lines (compose commands) --------------------------------------------------

SHELL_KEYWORDS = {"do", "then", "else", "exec", "time", "!"}
SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", ";;"}


def shell_commands(script: str) -> list[list[str]]:
    """Simple commands of a POSIX shell script, split at ; && || | and newlines,
    with leading keywords (do, then, exec...) removed."""
    commands: list[list[str]] = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        current: list[str] = []
        for token in lexer:
            if token in SEPARATORS:
                if current:
                    commands.append(current)
                current = []
                continue
            if not current and token in SHELL_KEYWORDS:
                continue
            current.append(token)
        if current:
            commands.append(current)
    return commands


def twistarena_commands(script: str) -> list[list[str]]:
    """The argv (after the program name) of every ``twistarena`` call in a script."""
    return [cmd[1:] for cmd in shell_commands(script)
            if cmd and Path(cmd[0]).name == "twistarena"]


# -- Dockerfile --------------------------------------------------------------------


@dataclass
class Instruction:
    keyword: str
    text: str
    line: int

    @property
    def after_options(self) -> str:
        rest = self.text
        while rest.startswith("--"):
            rest = rest.split(None, 1)[1] if " " in rest else ""
        return rest.strip()

    @property
    def exec_form(self) -> list[str] | None:
        """The JSON array of an exec-form instruction (after any --options and,
        for HEALTHCHECK, the CMD word)."""
        rest = self.after_options
        if self.keyword == "HEALTHCHECK" and rest.startswith("CMD "):
            rest = rest[4:].strip()
        if rest.startswith("["):
            value = json.loads(rest)
            assert isinstance(value, list)
            return [str(v) for v in value]
        return None

    @property
    def options(self) -> dict[str, str]:
        return dict(m.groups() for m in re.finditer(r"--([a-z-]+)=(\S+)", self.text))


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]

    def last(self, keyword: str) -> Instruction | None:
        found = self.all(keyword)
        return found[-1] if found else None


def dockerfile_instructions(text: str) -> Iterator[Instruction]:
    logical = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not logical and (not stripped or stripped.startswith("#")):
            continue
        if logical and stripped.startswith("#"):
            continue
        if not logical:
            start = number
        if stripped.endswith("\\"):
            logical += stripped[:-1] + " "
            continue
        logical += stripped
        keyword, _, rest = logical.partition(" ")
        yield Instruction(keyword.upper(), rest.strip(), start)
        logical = ""


def dockerfile_stages(path: Path = DOCKERFILE) -> list[Stage]:
    """Stages in order, with global ARG defaults substituted into FROM."""
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for ins in dockerfile_instructions(path.read_text()):
        if ins.keyword == "ARG" and not stages:
            name, _, default = ins.text.partition("=")
            args[name.strip()] = default.strip()
            continue
        if ins.keyword == "FROM":
            words = ins.text.split()
            words = [w for w in words if not w.startswith("--platform")]
            base = re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)),
                          words[0])
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            stages.append(Stage(base, name))
            continue
        assert stages, f"Dockerfile line {ins.line}: {ins.keyword} before FROM"
        stages[-1].instructions.append(ins)
    return stages


def entrypoint_argv() -> list[str]:
    """The final image's ENTRYPOINT (exec form)."""
    final = dockerfile_stages()[-1]
    entry = final.last("ENTRYPOINT")
    assert entry is not None, "the final stage has no ENTRYPOINT"
    argv = entry.exec_form
    assert argv is not None, "ENTRYPOINT must use the exec form (JSON array) so signals reach it"
    return argv


def serve_argv(appended: Sequence[str] = ()) -> list[str]:
    """``serve ...`` as the image runs it with ``appended`` arguments."""
    argv = entrypoint_argv()
    assert argv[:2] == ["twistarena", "serve"], f"ENTRYPOINT is not `twistarena serve`: {argv}"
    return [*argv[1:], *appended]


# -- .dockerignore -------------------------------------------------------------------


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    out = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[":
            end = pattern.index("]", i)
            out += pattern[i:end + 1]
            i = end + 1
            continue
        else:
            out += re.escape(c)
        i += 1
    return re.compile(out + r"\Z")


def dockerignore_rules(path: Path = DOCKERIGNORE) -> list[tuple[bool, re.Pattern[str]]]:
    rules = []
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line[1:].strip() if negate else line
        pattern = pattern.strip("/")
        rules.append((negate, _pattern_regex(pattern)))
    return rules


def build_context_includes(relpath: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parent
    folders decides; ``!`` patterns re-include."""
    parts = relpath.strip("/").split("/")
    prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    included = True
    for negate, regex in rules:
        if any(regex.match(p) for p in prefixes):
            included = negate
    return included


# -- YAML ----------------------------------------------------------------------------


def yaml_documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def kubernetes_files() -> list[Path]:
    return sorted(p for p in KUBERNETES.rglob("*") if p.suffix in {".yaml", ".yml"})


def kubernetes_objects() -> list[tuple[Path, dict[str, Any]]]:
    return [(path, doc) for path in kubernetes_files() for doc in yaml_documents(path)]


def find_object(kind: str, name: str) -> dict[str, Any]:
    found = [doc for _, doc in kubernetes_objects()
             if doc.get("kind") == kind and doc.get("metadata", {}).get("name") == name]
    assert len(found) == 1, f"expected one {kind}/{name} in deploy/kubernetes, found {len(found)}"
    return found[0]


def objects_of(kind: str) -> list[dict[str, Any]]:
    return [doc for _, doc in kubernetes_objects() if doc.get("kind") == kind]


def selector_matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A Kubernetes label selector (matchLabels + matchExpressions) against labels."""
    if not selector:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def expand_env_refs(value: str, env: dict[str, str]) -> str:
    """Kubernetes' $(VAR) expansion in command/args; unknown references fail."""
    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        assert name in env, f"$({name}) is not defined in the container's env"
        return env[name]
    return re.sub(r"\$\((\w+)\)", sub, value)
