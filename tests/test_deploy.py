"""deploy/: the pair launcher (pure parts), docker compose, Kubernetes manifests, Dockerfile. Fast, files only."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from gateway.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
MODELS = Path(__file__).parent / "fixtures" / "models"  # config.json of ../shared/gpu/models
GATEWAY_PORT = Settings().port


def load_script(name: str, folder: Path = DEPLOY) -> ModuleType:
    """A deploy/ script by file, under its bare name: the scripts import each other that way, run from deploy/."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


LAUNCHER = ("pair_sizing", "pair_commands", "warm_vllm", "launch_pair")  # in import order
sizing, commands, warmer, lp = (load_script(name) for name in LAUNCHER)


# ------------------------------------------------------------------------------------------ launcher
LLAMA_8B = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
            "head_dim": 128, "intermediate_size": 14336, "vocab_size": 128256, "torch_dtype": "bfloat16"}


def test_model_size_of_llama_8b_shape() -> None:
    size = sizing.model_size_from_config(LLAMA_8B)
    assert 7.9e9 < size.params < 8.1e9  # Llama-3.1-8B has 8.03 B parameters
    assert 14.5 < size.weights_gib < 15.5
    assert size.kv_bytes_per_token == 2 * 32 * 8 * 128 * 2


def test_model_size_from_the_shared_gpu_recipe_configs() -> None:
    target = sizing.model_size_from_config(sizing.read_model_config(str(MODELS / "target")))
    draft = sizing.model_size_from_config(sizing.read_model_config(str(MODELS / "draft")))
    assert 6.5 < target.params / 1e9 < 7.5 and 0.9 < draft.params / 1e9 < 1.2
    assert target.vocab_size == draft.vocab_size == 32000


def test_split_fits_both_servers_and_gives_spare_to_kv() -> None:
    split = sizing.split_gpu_memory(140.0, 15.0, 0.0, 16.0, runtime_overhead_gib=3.0, reserve_fraction=0.04)
    assert split.baseline_fraction + split.speculative_fraction <= 0.96
    assert split.baseline_fraction == pytest.approx(split.speculative_fraction)  # n-gram: same needs
    assert split.baseline_kv_gib >= 16.0 and split.speculative_kv_gib >= 16.0
    assert split.baseline_fraction * 140 >= 15 + 3 + 16


def test_split_with_a_draft_gives_the_speculative_server_more() -> None:
    split = sizing.split_gpu_memory(80.0, 15.0, 1.0, 10.0)
    assert split.speculative_fraction > split.baseline_fraction
    assert split.baseline_fraction + split.speculative_fraction <= 0.96
    assert split.speculative_fraction * 80 >= 15 + 1 + 3 + 10


def test_split_is_monotone_in_kv_need() -> None:
    small = sizing.split_gpu_memory(80.0, 15.0, 1.0, 5.0)
    big = sizing.split_gpu_memory(80.0, 15.0, 1.0, 15.0)
    assert big.baseline_fraction + big.speculative_fraction == pytest.approx(
        small.baseline_fraction + small.speculative_fraction, abs=0.011)


@pytest.mark.parametrize(("args", "message"), [
    ((140.0, 15.0, 2.2, 16.0), "draft too big"),       # 8B target, 1B draft: 6.8×
    ((140.0, 15.0, 15.0, 16.0), "draft too big"),
    ((24.0, 15.0, 0.0, 16.0), "not enough GPU memory"),
    ((40.0, 15.0, 0.5, 4.0), "not enough GPU memory"),  # two copies of the target do not fit
    ((0.0, 15.0, 0.0, 16.0), "gpu_gib must be a positive"),
    ((80.0, -1.0, 0.0, 16.0), "target_gib must be a positive"),
    ((80.0, 15.0, -1.0, 16.0), "must be >= 0"),
    ((80.0, 15.0, 0.0, float("nan")), "kv_gib must be a positive"),
])
def test_split_rejects_bad_inputs_with_a_clear_error(args: tuple[float, ...], message: str) -> None:
    with pytest.raises(sizing.PairConfigError, match=message):
        sizing.split_gpu_memory(*args)


def test_draft_ratio_rule_can_be_relaxed_explicitly() -> None:
    split = sizing.split_gpu_memory(140.0, 15.0, 2.2, 16.0, min_draft_ratio=5.0)
    assert split.speculative_fraction > split.baseline_fraction


def _split() -> Any:
    return sizing.split_gpu_memory(140.0, 15.0, 0.0, 16.0)


def test_ngram_command_lines() -> None:
    cfg = commands.PairConfig(target="meta-llama/Llama-3.1-8B-Instruct", served_model_name="target",
                        num_speculative_tokens=5, prompt_lookup_max=5, prompt_lookup_min=3, max_model_len=4096)
    split = _split()
    base, spec = commands.build_commands(cfg, split)
    assert base[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
    assert spec[:3] == base[:3]  # same target model on both
    assert base[base.index("--port") + 1] == "8001" and spec[spec.index("--port") + 1] == "8002"
    assert base[base.index("--gpu-memory-utilization") + 1] == f"{split.baseline_fraction:.2f}"
    assert "--speculative-config" not in base
    conf = json.loads(spec[spec.index("--speculative-config") + 1])
    assert conf == {"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 5, "prompt_lookup_min": 3}
    assert spec[spec.index("--max-model-len") + 1] == "4096"
    assert spec[spec.index("--served-model-name") + 1] == "target"


def test_draft_model_command_line_and_extras() -> None:
    cfg = commands.PairConfig(target="t", draft="d", vllm=("python3", "-m", "vllm.entrypoints.cli.main"),
                        speculative_extra={"rejection_sample_method": "synthetic", "synthetic_acceptance_length": 3.4},
                        extra_args=("--load-format", "dummy"))
    base, spec = commands.build_commands(cfg, _split())
    assert base[:4] == ["python3", "-m", "vllm.entrypoints.cli.main", "serve"]
    assert "--load-format" in base and "--load-format" in spec
    conf = json.loads(spec[spec.index("--speculative-config") + 1])
    assert conf["method"] == "draft_model" and conf["model"] == "d" and conf["num_speculative_tokens"] == 4
    assert conf["synthetic_acceptance_length"] == 3.4


@pytest.mark.parametrize(("cfg", "message"), [
    (dict(baseline_port=8001, speculative_port=8001), "ports must differ"),
    (dict(speculative_port=70000), "bad port"),
    (dict(num_speculative_tokens=0), "num_speculative_tokens"),
    (dict(prompt_lookup_min=5, prompt_lookup_max=2), "prompt_lookup_min"),
])
def test_command_lines_reject_bad_config(cfg: dict[str, Any], message: str) -> None:
    with pytest.raises(sizing.PairConfigError, match=message):
        commands.build_commands(commands.PairConfig(target="t", **cfg), _split())


def test_gateway_env_points_at_the_pair() -> None:
    cfg = commands.PairConfig(target="t", host="0.0.0.0", baseline_port=9001, speculative_port=9002)
    env = commands.gateway_env(cfg)
    assert env["SPECGATE_BASELINE_URLS"] == "http://127.0.0.1:9001"
    assert env["SPECGATE_SPECULATIVE_URLS"] == "http://127.0.0.1:9002"
    parsed = Settings(baseline_urls=env["SPECGATE_BASELINE_URLS"], speculative_urls=env["SPECGATE_SPECULATIVE_URLS"])
    assert parsed.baseline_urls == ["http://127.0.0.1:9001"]


def _write_model(path: Path, **overrides: Any) -> Path:
    path.mkdir()
    (path / "config.json").write_text(json.dumps({**LLAMA_8B, **overrides}))
    return path


def test_dry_run_prints_commands_and_gateway_env(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = _write_model(tmp_path / "target")
    rc = lp.main(["--target", str(target), "--ngram", "--gpu-gib", "140", "--dry-run", "--", "--load-format", "dummy"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "vllm serve" in out and "--speculative-config" in out and "--load-format dummy" in out
    assert "export SPECGATE_BASELINE_URLS=http://127.0.0.1:8001" in out
    assert "export SPECGATE_SPECULATIVE_URLS=http://127.0.0.1:8002" in out


def test_config_file_and_clear_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = _write_model(tmp_path / "target")
    big_draft = _write_model(tmp_path / "draft", num_hidden_layers=8)
    conf = tmp_path / "pair.yaml"
    conf.write_text(yaml.safe_dump({"target": str(target), "draft": str(big_draft), "gpu-gib": 140,
                                    "dry_run": True}))
    assert lp.main(["--config", str(conf)]) == 2
    assert "draft too big" in capsys.readouterr().err
    other_vocab = _write_model(tmp_path / "draft2", vocab_size=32000, num_hidden_layers=1, intermediate_size=1024)
    assert lp.main(["--target", str(target), "--draft", str(other_vocab), "--gpu-gib", "140", "--dry-run"]) == 2
    assert "vocab_size" in capsys.readouterr().err
    assert lp.main(["--target", str(target), "--ngram", "--gpu-gib", "20", "--dry-run"]) == 2
    assert "not enough GPU memory" in capsys.readouterr().err
    assert lp.main(["--target", "org/unknown-model", "--ngram", "--gpu-gib", "80", "--dry-run"]) == 2
    assert "--target-gib" in capsys.readouterr().err


@pytest.mark.parametrize("name", LAUNCHER)
def test_launcher_uses_only_stdlib_and_pyyaml(name: str) -> None:
    import ast

    tree = ast.parse((DEPLOY / f"{name}.py").read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported - set(sys.stdlib_module_names) <= {"yaml", *LAUNCHER}


# ------------------------------------------------------------------------------------------- compose
def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    return data


def test_compose_has_the_pair_gateway_prometheus_grafana() -> None:
    services = compose()["services"]
    assert set(services) == {"vllm-baseline", "vllm-speculative", "gateway", "prometheus", "grafana"}
    for name in ("vllm-baseline", "vllm-speculative"):
        devices = services[name]["deploy"]["resources"]["reservations"]["devices"]
        assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"]
        assert devices[0]["device_ids"] == ["${GPU_ID:-0}"]  # both on the same GPU
    base, spec = services["vllm-baseline"]["command"], services["vllm-speculative"]["command"]
    assert base[0] == spec[0]  # same target model
    assert "--port=8001" in base and "--port=8002" in spec
    assert any(a.startswith("--speculative-config=") for a in spec)
    assert not any(a.startswith("--speculative-config") for a in base)
    assert services["vllm-speculative"]["depends_on"]["vllm-baseline"]["condition"] == "service_healthy"


def test_compose_gateway_matches_gateway_defaults_and_prometheus_targets() -> None:
    services = compose()["services"]
    gw = services["gateway"]
    assert gw["build"]["dockerfile"] == "deploy/Dockerfile"
    assert gw["environment"]["SPECGATE_PORT"] == str(GATEWAY_PORT)
    assert gw["ports"] == [f"{GATEWAY_PORT}:{GATEWAY_PORT}"]
    topology = Settings(backends=gw["environment"]["SPECGATE_BACKENDS"]).topology()
    assert [(b.role, b.url, b.group) for b in topology] == [
        ("baseline", "http://vllm-baseline:8001", "gpu0"), ("speculative", "http://vllm-speculative:8002", "gpu0")]
    prom = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    jobs = {j["job_name"]: j for j in prom["scrape_configs"]}
    assert jobs["specgate"]["static_configs"][0]["targets"] == [f"gateway:{GATEWAY_PORT}"]
    roles = {tuple(sc["targets"]): sc["labels"]["role"] for sc in jobs["vllm"]["static_configs"]}
    assert roles == {("vllm-baseline:8001",): "baseline", ("vllm-speculative:8002",): "speculative"}
    assert "./prometheus:/etc/prometheus:ro" in services["prometheus"]["volumes"]


def test_compose_env_file_defines_every_required_variable() -> None:
    env = dict(line.split("=", 1) for line in (DEPLOY / ".env").read_text().splitlines()
               if line and not line.startswith("#"))
    conf = json.loads(env["SPECULATIVE_CONFIG"])
    assert conf["method"] == "ngram" and conf["num_speculative_tokens"] == int(env["NUM_SPECULATIVE_TOKENS"])
    assert float(env["BASELINE_GPU_MEMORY_UTILIZATION"]) + float(env["SPECULATIVE_GPU_MEMORY_UTILIZATION"]) < 0.97
    assert "HF_TOKEN" not in env


def _compose_cli() -> list[str] | None:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def test_docker_compose_config_validates() -> None:
    cli = _compose_cli()
    if cli is None:
        reason = "neither `docker compose` nor `docker-compose` is installed (apt-get install -y docker-compose)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    proc = subprocess.run([*cli, "--env-file", str(DEPLOY / ".env"), "-f", str(DEPLOY / "docker-compose.yml"),
                           "config", "-q"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_compose_gateway_keeps_its_learned_state_on_a_volume() -> None:
    gw = compose()["services"]["gateway"]
    state = Path(gw["environment"]["SPECGATE_STATE_FILE"])
    (volume,) = gw["volumes"]
    name, _, mount = volume.partition(":")
    assert mount == str(state.parent) and name in compose()["volumes"]
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert f"mkdir -p {state.parent} && chown 10001 {state.parent}" in dockerfile  # writable by the gateway user


# Kubernetes manifests: tests/test_k8s.py


# ------------------------------------------------------------------------------------- Dockerfile etc.
def test_dockerfile_builds_the_gateway_with_a_healthcheck() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert text.startswith("#") and "FROM python:3.11-slim" in text
    build, _, image = text.partition("FROM python:3.11-slim")
    assert "ARG SPECGATE_COMPILE=1" in build and "pip wheel" in build and "COPY gateway ./gateway" in build
    assert "COPY --from=wheel /wheels" in image and "pip install /wheels/*.whl" in image  # compiled, no compiler
    assert "HEALTHCHECK" in text and "/health" in text
    assert 'CMD ["specgate", "serve"]' in text
    assert f"EXPOSE {GATEWAY_PORT}" in text and "SPECGATE_HOST=0.0.0.0" in text


def test_readme_walks_from_one_gpu_to_dashboards() -> None:
    text = (DEPLOY / "README.md").read_text()
    for needle in ("launch_pair.py", "specgate serve", "docker compose", "kubectl apply", "Grafana",
                   "10–50×", "tokenizer"):
        assert needle in text, needle


def _preflight(tmp_path: Path, shadow: str | None) -> subprocess.CompletedProcess[str]:
    """deploy/gpu/preflight.sh as run_one_gpu.sh sources it; `shadow`: a module made unimportable first."""
    path = [str(ROOT)]
    if shadow is not None:  # a module that fails to import, ahead of the real one on the path
        (tmp_path / f"{shadow}.py").write_text(f"raise ModuleNotFoundError(\"No module named '{shadow}'\")\n")
        path.insert(0, str(tmp_path))
    env = {**os.environ, "PY": sys.executable, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.run(["bash", "-c", f". {DEPLOY / 'gpu' / 'preflight.sh'}; echo passed"], env=env,
                          capture_output=True, text=True, timeout=60, check=False)


def test_gpu_preflight_stops_before_vllm_when_the_gateway_cannot_import(tmp_path: Path) -> None:
    """Regression (2026-12-07): a device call started the vLLM pair (4 minutes) and then died on the bench's
    `import orjson`, which the GPU image lacks; the preflight stops first and names the fix."""
    failed = _preflight(tmp_path, "orjson")
    assert failed.returncode == 3, failed.stdout + failed.stderr
    assert "orjson" in failed.stdout and "fetch_wheels.sh" in failed.stdout and "passed" not in failed.stdout
    ok = _preflight(tmp_path, None)
    assert ok.returncode == 0 and ok.stdout.strip().endswith("passed"), ok.stdout + ok.stderr


def test_the_real_bench_records_the_gateways_migrations_and_switches_from_its_metrics() -> None:
    """deploy/gpu/bench_probe.counters_by on the gateway's own exposition: a real-GPU run's record says how many
    requests live migration moved, by reason, and how many regime switches each group took (round v's H100 run
    could not tell whether a switch's leaving requests had moved)."""
    from prometheus_client import generate_latest

    from gateway.metrics import Metrics

    probe = load_script("bench_probe", DEPLOY / "gpu")  # it imports only the gateway's modules
    m = Metrics()
    m.migrations.labels("switch").inc(3)
    m.migrations.labels("not_worth").inc()
    m.regime_switches.labels("pair-0").inc(2)
    text = generate_latest(m.registry).decode()
    assert probe.counters_by(text, "specgate_migrations_total", "reason") == {
        "switch": 3.0, "resume_on_leaving": 0.0, "not_worth": 1.0, "resume_failed": 0.0}
    assert probe.counters_by(text, "specgate_regime_switches_total", "group") == {"pair-0": 2.0}
    assert probe.counters_by("", "specgate_migrations_total", "reason") == {}  # the gateway did not answer

