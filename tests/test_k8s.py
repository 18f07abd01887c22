"""deploy/k8s/: every manifest validated offline against the Kubernetes schemas (kubernetes-validate), and
the fleet wiring checked: pools and pair layouts, the gateway's probes, drain, keys, autoscaling, and
Prometheus scraping every replica. Files only, fast."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from gateway.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "k8s"
GATEWAY_PORT = Settings().port
KUBERNETES_VERSIONS = ("1.30.0", "1.37.0")  # oldest we claim, newest the package ships
CRD_GROUPS = ("monitoring.coreos.com/",)  # Prometheus Operator objects: no schema in kubernetes-validate
LAYOUTS = ("pools", "pair")
DOMAIN = "specgate.svc.cluster.local"


def load(paths: list[Path]) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in paths:
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


def every_file() -> list[Path]:
    return sorted(K8S.rglob("*.yaml"))


def layout(name: str) -> list[dict[str, Any]]:
    """What `kubectl apply -f deploy/k8s/ -f deploy/k8s/<name>/` creates."""
    return load(sorted(K8S.glob("*.yaml")) + sorted((K8S / name).glob("*.yaml")))


def find(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    matches = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(matches) == 1, (kind, name, len(matches))
    return matches[0]


def backends(docs: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """SPECGATE_BACKENDS as (role, url, group), `role=url@group` entries."""
    raw = find(docs, "ConfigMap", "specgate-backends")["data"]["SPECGATE_BACKENDS"]
    out = []
    for entry in raw.split(","):
        role, _, rest = entry.strip().partition("=")
        url, _, group = rest.rpartition("@")
        out.append((role, url, group))
    if "backends" in Settings.model_fields:  # the fleet topology setting: the gateway must read the same
        topology = Settings(backends=raw).topology()  # type: ignore[call-arg, attr-defined, unused-ignore]
        assert [(b.role, b.url, b.group) for b in topology] == out
    return out


@pytest.mark.parametrize("path", every_file(), ids=lambda p: str(p.relative_to(K8S)))
def test_manifest_validates_against_the_kubernetes_schemas(path: Path) -> None:
    for doc in load([path]):
        if doc["apiVersion"].startswith(CRD_GROUPS):
            continue
        for version in KUBERNETES_VERSIONS:
            kubernetes_validate.validate(doc, version, strict=True)  # raises with the field path when wrong
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == "specgate", doc["metadata"]["name"]


def test_the_validator_catches_a_wrong_manifest() -> None:
    dep = find(layout("pools"), "Deployment", "specgate")
    bad = yaml.safe_load(yaml.safe_dump(dep))
    bad["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["port"] = [8000]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, KUBERNETES_VERSIONS[0], strict=True)
    bad = yaml.safe_load(yaml.safe_dump(dep))
    bad["spec"]["replica"] = 3  # a typo: strict validation refuses unknown fields
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, KUBERNETES_VERSIONS[0], strict=True)


@pytest.mark.parametrize("name", LAYOUTS)
def test_each_layout_is_complete(name: str) -> None:
    docs = layout(name)
    kinds = {d["kind"] for d in docs}
    assert {"Namespace", "ConfigMap", "Secret", "StatefulSet", "Service", "Deployment", "HorizontalPodAutoscaler",
            "PodDisruptionBudget"} <= kinds
    names = [(d["kind"], d["metadata"]["name"]) for d in docs]
    assert len(names) == len(set(names)), "two objects of one kind and name"


def test_gateway_deployment_replicas_probes_drain_keys_and_scraping() -> None:
    docs = layout("pools")
    dep = find(docs, "Deployment", "specgate")
    assert dep["spec"]["replicas"] >= 2
    assert dep["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    pod = dep["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    assert container["image"].startswith("specgate:")
    assert container["ports"][0]["containerPort"] == GATEWAY_PORT
    assert container["readinessProbe"]["httpGet"]["path"] == "/ready"
    assert container["livenessProbe"]["httpGet"]["path"] == "/health"
    refs = [r.get("configMapRef", r.get("secretRef")) for r in container["envFrom"]]
    assert [r["name"] for r in refs] == ["specgate-gateway", "specgate-backends", "specgate-keys"]
    # the drain: preStop waits for the endpoint removal, then SIGTERM drains for SPECGATE_DRAIN_TIMEOUT_S;
    # the grace period must cover both, or Kubernetes kills streams the gateway would have finished
    settings = find(docs, "ConfigMap", "specgate-gateway")["data"]
    drain = float(settings["SPECGATE_DRAIN_TIMEOUT_S"])
    command = container["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep"
    assert pod["spec"]["terminationGracePeriodSeconds"] > float(command[1]) + drain
    # keys in the Secret, every other setting in the ConfigMap; together they parse as Settings
    secret = find(docs, "Secret", "specgate-keys")["stringData"]
    assert set(secret) == {"SPECGATE_API_KEYS", "SPECGATE_ADMIN_API_KEY"}
    assert not any(k in settings for k in secret) and not any("KEY" in k for k in settings)
    merged = {**settings, **secret}
    parsed = Settings(**{k.removeprefix("SPECGATE_").lower(): v for k, v in merged.items()})
    assert parsed.port == GATEWAY_PORT and parsed.host == "0.0.0.0" and parsed.drain_timeout_s == drain
    assert parsed.peers == [f"http://specgate.{DOMAIN}:{GATEWAY_PORT}"]  # a new pod warm-starts via the Service
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert str(parsed.state_file).rsplit("/", 1)[0] in mounts  # the state file is on a writable volume
    labels = pod["metadata"]["labels"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert pod["metadata"]["annotations"]["prometheus.io/scrape"] == "true"
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == str(GATEWAY_PORT)
    svc = find(docs, "Service", "specgate")
    assert svc["spec"]["selector"].items() <= labels.items() and svc["spec"]["ports"][0]["port"] == GATEWAY_PORT
    hpa = find(docs, "HorizontalPodAutoscaler", "specgate")
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "specgate"}
    assert hpa["spec"]["minReplicas"] >= 2 and hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"
    pdb = find(docs, "PodDisruptionBudget", "specgate")
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert pdb["spec"]["minAvailable"] < hpa["spec"]["minReplicas"]  # a node drain can always proceed


def test_pools_give_every_server_a_gpu_and_a_stable_name_the_gateway_lists() -> None:
    docs = layout("pools")
    expected = []
    for role, name in (("baseline", "vllm-baseline"), ("speculative", "vllm-speculative")):
        sts = find(docs, "StatefulSet", name)
        svc = find(docs, "Service", sts["spec"]["serviceName"])
        assert svc["spec"]["clusterIP"] == "None"  # headless: per-pod DNS names
        pod = sts["spec"]["template"]
        assert pod["metadata"]["labels"]["specgate.io/role"] == role
        assert svc["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
        (container,) = pod["spec"]["containers"]
        assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
        assert ("--speculative-config" in container["args"][0]) == (role == "speculative")
        port = container["ports"][0]["containerPort"]
        assert svc["spec"]["ports"][0]["port"] == port
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert container[probe]["httpGet"]["path"] == "/health"
        expected += [(role, f"http://{name}-{i}.{svc['metadata']['name']}.{DOMAIN}:{port}")
                     for i in range(sts["spec"]["replicas"])]
    listed = backends(docs)
    assert [(role, url) for role, url, _ in listed] == expected
    groups = [group for _, _, group in listed]
    assert all(groups) and len(set(groups)) == len(groups)  # a GPU of its own each


def test_pair_layout_puts_both_servers_of_a_pod_in_one_gpu_group() -> None:
    docs = layout("pair")
    sts = find(docs, "StatefulSet", "vllm-pair")
    pod = sts["spec"]["template"]["spec"]
    containers = {c["name"]: c for c in pod["containers"]}
    assert containers["baseline"]["resources"]["limits"]["nvidia.com/gpu"] == 1
    env = {e["name"]: e.get("value") for e in containers["speculative"]["env"]}
    assert env["NVIDIA_VISIBLE_DEVICES"] == "all"
    assert all(c["envFrom"][0]["configMapRef"]["name"] == "vllm" for c in pod["containers"])
    find(docs, "ConfigMap", "vllm")
    ports = {c["name"]: c["ports"][0]["containerPort"] for c in pod["containers"]}
    svc = sts["spec"]["serviceName"]
    assert find(docs, "Service", svc)["spec"]["clusterIP"] == "None"
    expected = []
    for i in range(sts["spec"]["replicas"]):
        host = f"http://vllm-pair-{i}.{svc}.{DOMAIN}"
        expected += [("baseline", f"{host}:{ports['baseline']}", f"gpu-{i}"),
                     ("speculative", f"{host}:{ports['speculative']}", f"gpu-{i}")]
    assert backends(docs) == expected


def _prometheus_config() -> dict[str, Any]:
    cm = find(load([K8S / "prometheus.yaml"]), "ConfigMap", "prometheus-config")
    config: dict[str, Any] = yaml.safe_load(cm["data"]["prometheus.yml"])
    return config


def _discovered(doc: dict[str, Any]) -> list[dict[str, str]]:
    """The targets Prometheus's Kubernetes pod discovery yields for one pod of `doc`: one per container port,
    with the __meta_ labels the relabel rules read."""
    meta = doc["spec"]["template"]["metadata"]
    base = {"__meta_kubernetes_pod_name": f"{doc['metadata']['name']}-0"}
    for key, value in meta.get("labels", {}).items():
        base["__meta_kubernetes_pod_label_" + "".join(c if c.isalnum() else "_" for c in key)] = value
    for key, value in meta.get("annotations", {}).items():
        base["__meta_kubernetes_pod_annotation_" + "".join(c if c.isalnum() else "_" for c in key)] = value
    return [{**base, "__meta_kubernetes_pod_container_port_name": port.get("name", ""),
             "__address__": f"10.0.0.1:{port['containerPort']}"}
            for c in doc["spec"]["template"]["spec"]["containers"] for port in c.get("ports", [])]


def _relabel(labels: dict[str, str], rules: list[dict[str, Any]]) -> dict[str, str] | None:
    """Prometheus relabelling, the `replace` and `keep` actions (anchored regex, `;` separator, $1)."""
    import re

    out = dict(labels)
    for rule in rules:
        value = ";".join(out.get(name, "") for name in rule.get("source_labels", []))
        match = re.fullmatch(rule.get("regex", "(.*)"), value)
        action = rule.get("action", "replace")
        if action == "keep":
            if match is None:
                return None
        elif action == "replace" and match is not None:
            out[rule["target_label"]] = match.expand(rule.get("replacement", "$1").replace("$1", r"\g<1>")) \
                if match.groups() else rule.get("replacement", value)
    return out


def test_prometheus_scrapes_every_replica_and_server_with_the_dashboards_labels() -> None:
    cm = find(load([K8S / "prometheus.yaml"]), "ConfigMap", "prometheus-config")
    config = yaml.safe_load(cm["data"]["prometheus.yml"])
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    assert set(jobs) == {"specgate", "vllm"}  # the job names the dashboards and alerts select on
    for job in jobs.values():
        assert job["kubernetes_sd_configs"] == [{"role": "pod", "namespaces": {"names": ["specgate"]}}]
    # (Debian's promtool is built without Kubernetes discovery, so the rules are checked here by applying them
    # to the targets discovery would find for every pod of both layouts)
    scraped: dict[tuple[str, str], dict[str, str]] = {}
    workloads = {d["metadata"]["name"]: d for d in load(every_file()) if d["kind"] in ("Deployment", "StatefulSet")}
    for doc in workloads.values():
        for target in _discovered(doc):
            for job_name, job in jobs.items():
                kept = _relabel(target, job["relabel_configs"])
                if kept is not None:
                    port = target["__meta_kubernetes_pod_container_port_name"]
                    assert (doc["metadata"]["name"], port) not in scraped, "scraped by two jobs"
                    scraped[(doc["metadata"]["name"], port)] = {"job": job_name, "role": kept.get("role", "")}
    assert scraped == {
        ("specgate", "http"): {"job": "specgate", "role": ""},
        ("vllm-baseline", "http"): {"job": "vllm", "role": "baseline"},
        ("vllm-speculative", "http"): {"job": "vllm", "role": "speculative"},
        ("vllm-pair", "baseline"): {"job": "vllm", "role": "baseline"},
        ("vllm-pair", "speculative"): {"job": "vllm", "role": "speculative"},
    }  # every gateway replica and every server, once, with its role; Prometheus itself not
    role = find(load([K8S / "prometheus.yaml"]), "Role", "prometheus")
    assert role["rules"][0]["resources"] == ["pods"] and "list" in role["rules"][0]["verbs"]
    dep = find(load([K8S / "prometheus.yaml"]), "Deployment", "prometheus")
    assert dep["spec"]["template"]["spec"]["serviceAccountName"] == "prometheus"


def test_operator_monitors_match_the_plain_scrape_config() -> None:
    docs = load([K8S / "operator" / "monitoring.yaml"])
    sm = find(docs, "ServiceMonitor", "specgate")
    assert sm["spec"]["selector"]["matchLabels"].items() <= find(layout("pools"), "Service", "specgate")[
        "metadata"]["labels"].items()
    pm = find(docs, "PodMonitor", "vllm")
    assert pm["spec"]["selector"]["matchLabels"] == {"app.kubernetes.io/component": "vllm"}
    ports = {e["port"] for e in pm["spec"]["podMetricsEndpoints"]}
    assert ports == {"http", "baseline", "speculative"}


def test_readme_walks_from_one_gpu_to_a_fleet() -> None:
    text = (ROOT / "deploy" / "README.md").read_text()
    for needle in ("kubectl apply -f deploy/k8s/ -f deploy/k8s/pools/", "deploy/k8s/pair/", "SPECGATE_BACKENDS",
                   "SPECGATE_PEERS", "SPECGATE_DRAIN_TIMEOUT_S", "preStop", "PodDisruptionBudget", "specgate-keys"):
        assert needle in text, needle
