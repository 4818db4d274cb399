"""Environment variables the deployment files give the product are ones the
product reads (a renamed variable would be silently ignored)."""

from __future__ import annotations

import re
from typing import Any

import yaml

from tests.deploy.helpers import COMPOSE, HEALTHCHECK, ROOT, kubernetes_objects

SOURCES = [*sorted((ROOT / "server").rglob("*.py")), *sorted((ROOT / "clients").rglob("*.py")),
           HEALTHCHECK]


def product_text() -> str:
    return "\n".join(p.read_text() for p in SOURCES)


def deployed_variables() -> set[str]:
    names: set[str] = set()
    for _, doc in kubernetes_objects():
        if doc["kind"] in {"ConfigMap", "Secret"}:
            names |= set(doc.get("data", {})) | set(doc.get("stringData", {}))
        if doc["kind"] in {"StatefulSet", "Deployment"}:
            for c in doc["spec"]["template"]["spec"]["containers"]:
                names |= {e["name"] for e in c.get("env", [])}
                names |= {e["valueFrom"]["secretKeyRef"]["key"] for e in c.get("env", [])
                          if "secretKeyRef" in e.get("valueFrom", {})}
    services: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())["services"]
    for service in services.values():
        env = service.get("environment", {})
        names |= set(env) if isinstance(env, dict) else {e.split("=")[0] for e in env}
    return {n for n in names if n.startswith("TWISTARENA_")}


def test_every_twistarena_variable_is_read_by_the_product() -> None:
    names = deployed_variables()
    assert {"TWISTARENA_ADMIN_TOKEN", "TWISTARENA_REDIS_URL"} <= names
    text = product_text()
    unread = sorted(n for n in names if not re.search(rf"[\"']{n}[\"']", text))
    assert not unread, f"set by deploy files but read nowhere in server/ or clients/: {unread}"
