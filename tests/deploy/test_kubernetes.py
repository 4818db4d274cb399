"""deploy/kubernetes: every object valid for recent Kubernetes versions, and
consistent with the product (CLI flags, ports, probes, drain, security)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate.utils import latest_version

from tests.deploy.helpers import (
    KUBERNETES,
    VALKEY_CONF,
    dockerfile_stages,
    expand_env_refs,
    find_object,
    flag_values,
    host_port,
    known_settings,
    kubernetes_files,
    kubernetes_objects,
    objects_of,
    parse_cli,
    selector_matches,
    serve_argv,
    yaml_documents,
)

#: The oldest version the manifests target (native sleep preStop hook is
#: on by default from 1.30; gRPC probes are GA since 1.27) and the newest
#: the schemas bundled with kubernetes-validate know.
KUBERNETES_VERSIONS = ("1.31.0", latest_version())
SERVER = "twistarena"
POD_ENV = {"POD_NAME": "twistarena-0", "POD_NAMESPACE": "arena"}


def server_set() -> dict[str, Any]:
    return find_object("StatefulSet", SERVER)


def server_pod() -> dict[str, Any]:
    pod: dict[str, Any] = server_set()["spec"]["template"]
    return pod


def server_container() -> dict[str, Any]:
    containers = server_pod()["spec"]["containers"]
    found = [c for c in containers if c["name"] == SERVER]
    assert len(found) == 1
    return found[0]


def container_port(container: dict[str, Any], name: str) -> int:
    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    assert name in ports, f"container {container['name']} has no port named {name}"
    return int(ports[name])


def server_args() -> list[str]:
    """`serve ...` as the pod runs it: the image's entrypoint plus the pod's args,
    with $(VAR) references expanded."""
    container = server_container()
    assert "command" not in container, "the pod keeps the image's entrypoint"
    env = dict(POD_ENV)
    for item in container.get("env", []):
        env.setdefault(item["name"], item.get("value", f"<{item['name']}>"))
    args = [expand_env_refs(a, env) for a in container.get("args", [])]
    return serve_argv(args)


# -- schema ------------------------------------------------------------------------


def test_there_are_manifests() -> None:
    kinds = {doc["kind"] for _, doc in kubernetes_objects()}
    assert {"StatefulSet", "Service", "PodDisruptionBudget", "ConfigMap"} <= kinds


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("path", kubernetes_files(),
                         ids=lambda p: p.relative_to(KUBERNETES).as_posix())
def test_manifest_validates_against_kubernetes_schema(path: Path, version: str) -> None:
    docs = yaml_documents(path)
    assert docs, f"{path} holds no object"
    for doc in docs:
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            raise AssertionError(f"{path.name}: {doc.get('kind')}/"
                                 f"{doc.get('metadata', {}).get('name')}: {error.message} "
                                 f"at {list(error.path)} (Kubernetes {version})") from None


def test_object_names_are_unique() -> None:
    seen = [(doc["kind"], doc["metadata"]["name"]) for _, doc in kubernetes_objects()]
    assert len(seen) == len(set(seen)), seen


# -- the server nodes ----------------------------------------------------------------


def test_three_nodes_with_stable_identities() -> None:
    sts = server_set()
    assert sts["spec"]["replicas"] == 3
    labels = server_pod()["metadata"]["labels"]
    assert selector_matches(sts["spec"]["selector"], labels)
    headless = find_object("Service", sts["spec"]["serviceName"])
    assert headless["spec"].get("clusterIP") == "None", "serviceName is a headless Service"
    assert selector_matches({"matchLabels": headless["spec"]["selector"]}, labels)


def test_serve_flags_exist_and_parse() -> None:
    args = parse_cli(server_args())
    assert args.command == "serve"
    assert args.host == "0.0.0.0"


def test_node_id_and_advertise_are_per_pod() -> None:
    argv = server_args()
    service = server_set()["spec"]["serviceName"]
    raw = server_container()["args"]
    assert flag_values(raw, "--node-id") == ["$(POD_NAME)"]
    [advertise] = flag_values(argv, "--advertise")
    host, port = host_port(advertise)
    assert host.startswith(f"{POD_ENV['POD_NAME']}.{service}.{POD_ENV['POD_NAMESPACE']}.svc"), (
        "each node advertises its own name under the headless Service")
    assert port == container_port(server_container(), "grpc")
    env = {e["name"]: e for e in server_container()["env"]}
    for name in ("POD_NAME", "POD_NAMESPACE"):
        assert "fieldRef" in env[name]["valueFrom"]


def test_grpc_port_is_the_served_port() -> None:
    args = known_settings(server_args())
    assert container_port(server_container(), "grpc") == args.port
    assert container_port(server_container(), "metrics") == args.metrics_port


def test_probes_use_grpc_health_on_the_grpc_port() -> None:
    container = server_container()
    grpc_port = container_port(container, "grpc")
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert probe in container, f"{probe} missing"
        spec = container[probe]
        assert set(spec) & {"grpc", "httpGet", "tcpSocket", "exec"} == {"grpc"}, (
            f"{probe} uses the native gRPC probe (grpc.health.v1)")
        assert spec["grpc"]["port"] == grpc_port, f"{probe} targets the gRPC port"
        assert spec["grpc"].get("service", "") == "", f"{probe} asks about the whole node"


def test_grace_period_covers_pre_stop_and_drain() -> None:
    pod = server_pod()["spec"]
    container = server_container()
    grace = pod["terminationGracePeriodSeconds"]
    pre_stop = container["lifecycle"]["preStop"]
    assert "sleep" in pre_stop, "preStop waits for endpoints to be removed before SIGTERM"
    sleep = pre_stop["sleep"]["seconds"]
    [drain] = flag_values(server_args(), "--drain-grace")
    assert grace >= sleep + float(drain) + 5, (
        f"terminationGracePeriodSeconds {grace} < preStop {sleep} + drain {drain} + 5 s margin")
    live = container["livenessProbe"]
    assert live["periodSeconds"] * live["failureThreshold"] > grace, (
        "a draining node answers NOT_SERVING: liveness must not kill it before the grace ends")


def test_resources_requests_and_limits_everywhere() -> None:
    for _, doc in kubernetes_objects():
        if doc["kind"] not in {"StatefulSet", "Deployment"}:
            continue
        for c in doc["spec"]["template"]["spec"]["containers"]:
            res = c.get("resources", {})
            for part in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(res.get(part, {})), (
                    f"{doc['metadata']['name']}/{c['name']}: resources.{part} cpu and memory")


def test_pods_run_non_root_with_a_read_only_root() -> None:
    uid = int(dockerfile_stages()[-1].last("USER").text.split(":")[0])  # type: ignore[union-attr]
    assert server_pod()["spec"]["securityContext"]["runAsUser"] == uid, (
        "runAsUser is the image's USER")
    for _, doc in kubernetes_objects():
        if doc["kind"] not in {"StatefulSet", "Deployment"}:
            continue
        spec = doc["spec"]["template"]["spec"]
        pod_sc = spec.get("securityContext", {})
        for c in spec["containers"]:
            sc = c.get("securityContext", {})
            name = f"{doc['metadata']['name']}/{c['name']}"
            assert sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) is True, name
            assert sc.get("runAsUser", pod_sc.get("runAsUser", 0)) != 0, name
            assert sc.get("readOnlyRootFilesystem") is True, name
            assert sc.get("allowPrivilegeEscalation") is False, name
            assert "ALL" in sc.get("capabilities", {}).get("drop", []), name


def test_admin_token_from_a_secret_and_settings_from_a_config_map() -> None:
    container = server_container()
    env = {e["name"]: e for e in container["env"]}
    token = env["TWISTARENA_ADMIN_TOKEN"]["valueFrom"]["secretKeyRef"]
    assert token.get("optional", False) is False, "no node starts without an admin token"
    maps = [e["configMapRef"]["name"] for e in container.get("envFrom", []) if "configMapRef" in e]
    assert maps, "settings come from a ConfigMap"
    data = find_object("ConfigMap", maps[0])["data"]
    assert "TWISTARENA_REDIS_URL" in data


def test_redis_url_points_at_the_valkey_service() -> None:
    container = server_container()
    cm = next(e["configMapRef"]["name"] for e in container["envFrom"] if "configMapRef" in e)
    url = find_object("ConfigMap", cm)["data"]["TWISTARENA_REDIS_URL"]
    match = re.fullmatch(r"redis://([\w.-]+):(\d+)(/\d+)?", url)
    assert match, url
    service = find_object("Service", match.group(1).split(".")[0])
    assert int(match.group(2)) in {p["port"] for p in service["spec"]["ports"]}


def test_prometheus_scrapes_the_metrics_port() -> None:
    annotations = server_pod()["metadata"]["annotations"]
    args = known_settings(server_args())
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == args.metrics_port
    assert annotations.get("prometheus.io/path", "/metrics") == "/metrics"


def test_services_select_the_nodes_and_name_real_ports() -> None:
    labels = server_pod()["metadata"]["labels"]
    names = {p["name"] for p in server_container()["ports"]}
    services = [s for s in objects_of("Service")
                if s["metadata"]["name"].startswith(SERVER)]
    assert {s["metadata"]["name"] for s in services} >= {SERVER, "twistarena-nodes"}
    for svc in services:
        assert selector_matches({"matchLabels": svc["spec"]["selector"]}, labels), svc["metadata"]
        for port in svc["spec"]["ports"]:
            assert port["targetPort"] in names, f"{svc['metadata']['name']}: {port}"
    grpc_service = find_object("Service", SERVER)
    assert any(p["targetPort"] == "grpc" for p in grpc_service["spec"]["ports"])


def test_pdb_covers_exactly_the_nodes() -> None:
    pdbs = objects_of("PodDisruptionBudget")
    assert len(pdbs) == 1
    pdb = pdbs[0]["spec"]
    assert pdb["maxUnavailable"] == 1
    assert selector_matches(pdb["selector"], server_pod()["metadata"]["labels"])
    for _, doc in kubernetes_objects():
        if doc["kind"] == "StatefulSet" and doc["metadata"]["name"] != SERVER:
            other = doc["spec"]["template"]["metadata"]["labels"]
            assert not selector_matches(pdb["selector"], other), doc["metadata"]["name"]


# -- Valkey ----------------------------------------------------------------------------


def valkey_set() -> dict[str, Any]:
    return find_object("StatefulSet", "valkey")


def test_valkey_config_map_is_the_repository_file() -> None:
    sts = valkey_set()
    volumes = {v["name"]: v for v in sts["spec"]["template"]["spec"]["volumes"]}
    config = next(v["configMap"]["name"] for v in volumes.values() if "configMap" in v)
    data = find_object("ConfigMap", config)["data"]
    assert data["valkey.conf"] == VALKEY_CONF.read_text(), (
        "deploy/kubernetes/valkey ConfigMap differs from deploy/valkey/valkey.conf")


def test_valkey_keeps_its_append_only_file_on_a_volume_claim() -> None:
    sts = valkey_set()
    assert sts["spec"]["replicas"] == 1
    claims = {c["metadata"]["name"] for c in sts["spec"]["volumeClaimTemplates"]}
    [container] = sts["spec"]["template"]["spec"]["containers"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    conf = VALKEY_CONF.read_text()
    data_dir = re.search(r"^dir\s+(\S+)", conf, re.MULTILINE)
    assert data_dir, "valkey.conf sets dir"
    assert mounts.get(data_dir.group(1)) in claims, "the data dir is the persistent claim"
    config_path = container["command"][-1]
    assert config_path.endswith("valkey.conf")
    assert mounts.get(str(Path(config_path).parent)) is not None
    for setting in ("appendonly yes", "appendfsync everysec", "maxmemory-policy noeviction"):
        assert re.search(rf"^{setting}\s*$", conf, re.MULTILINE), setting


def test_valkey_maxmemory_stays_under_the_memory_limit() -> None:
    [container] = valkey_set()["spec"]["template"]["spec"]["containers"]
    limit = container["resources"]["limits"]["memory"]
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
    limit_bytes = int(limit[:-2]) * units[limit[-2:]]
    found = re.search(r"^maxmemory\s+(\d+)(mb|gb)\s*$", VALKEY_CONF.read_text(), re.MULTILINE)
    assert found, "valkey.conf sets maxmemory"
    max_bytes = int(found.group(1)) * (1 << 20 if found.group(2) == "mb" else 1 << 30)
    assert max_bytes < limit_bytes, "Valkey must refuse writes before the OOM killer strikes"


def test_only_the_nodes_may_reach_valkey() -> None:
    policy = find_object("NetworkPolicy", "valkey")["spec"]
    valkey_labels = valkey_set()["spec"]["template"]["metadata"]["labels"]
    assert selector_matches(policy["podSelector"], valkey_labels)
    [rule] = policy["ingress"]
    [source] = rule["from"]
    assert selector_matches(source["podSelector"], server_pod()["metadata"]["labels"])


# -- runners ---------------------------------------------------------------------------


def test_runners_reach_the_nodes_with_the_nodes_runner_token() -> None:
    runners = find_object("Deployment", "twistarena-runner")
    [container] = runners["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["twistarena", "runner"]
    args = parse_cli(["runner", *container["args"]])
    host, port = host_port(args.server)
    service = find_object("Service", host)
    assert port in {p["port"] for p in service["spec"]["ports"]}
    assert args.sandbox == "bwrap"
    token = {e["name"]: e for e in container["env"]}["TWISTARENA_RUNNER_TOKEN"]
    secret = token["valueFrom"]["secretKeyRef"]["name"]
    assert secret in [e["secretRef"]["name"] for e in server_container()["envFrom"]
                      if "secretRef" in e], "the nodes read the same Secret"
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert str(args.cache_dir) in mounts, "the version cache is on a writable volume"
    spec = runners["spec"]["template"]["spec"]
    assert spec["hostUsers"] is False, "bubblewrap's namespaces inside the pod's own"
    assert not selector_matches(find_object("PodDisruptionBudget", "twistarena")["spec"][
        "selector"], runners["spec"]["template"]["metadata"]["labels"])
