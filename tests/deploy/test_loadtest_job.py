"""deploy/loadtest: the load-test Job validates for recent Kubernetes and runs real commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate.utils import latest_version

from tests.deploy.helpers import parse_cli, yaml_documents

JOB = Path(__file__).resolve().parents[2] / "deploy" / "loadtest" / "loadtest-job.yaml"


def _objects() -> dict[tuple[str, str], dict[str, Any]]:
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml_documents(JOB)}


@pytest.mark.parametrize("version", ["1.31.0", latest_version()])
def test_the_job_validates_against_the_kubernetes_schema(version: str) -> None:
    for doc in yaml_documents(JOB):
        kubernetes_validate.validate(doc, version, strict=True)


def _argv(job: str) -> tuple[list[str], dict[str, Any]]:
    container = _objects()["Job", job]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["twistarena"]
    return container["args"], container


def test_workers_push_to_the_results_store_and_the_merge_waits_for_all_of_them() -> None:
    objects = _objects()
    config = objects["ConfigMap", "twistarena-loadtest"]["data"]
    env = {**config, "JOB_COMPLETION_INDEX": "3"}

    def expand(args: list[str]) -> list[str]:
        out = []
        for arg in args:
            for name, value in env.items():
                arg = arg.replace(f"$({name})", value)
            assert "$(" not in arg, f"unknown variable in {arg}"
            out.append(arg)
        return out

    worker_args, _ = _argv("twistarena-loadtest")
    worker = parse_cli(expand(worker_args))
    merge = parse_cli(expand(_argv("twistarena-loadtest-merge")[0]))
    assert worker.push_redis == merge.redis == config["LOAD_REDIS"]
    assert worker.run_id == merge.run_id == config["RUN_ID"]
    assert worker.seed == 3 and worker.rate > 0
    job = objects["Job", "twistarena-loadtest"]["spec"]
    assert merge.workers == job["completions"] == job["parallelism"]
    # The results store is the Service the URL names, selecting the results pod.
    service = objects["Service", "twistarena-loadtest-results"]
    assert config["LOAD_REDIS"].startswith(f"redis://{service['metadata']['name']}:6379")
    pod_labels = objects["Deployment", "twistarena-loadtest-results"]["spec"]["template"][
        "metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
