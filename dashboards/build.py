"""Generate the specgate Grafana dashboard (dashboards/specgate.json) from one table of panels.

    .venv/bin/python dashboards/build.py            # rewrite dashboards/specgate.json
    .venv/bin/python dashboards/build.py --check    # exit 1 if the committed JSON is stale

Every PromQL expression lives here, so panels stay consistent: filters use the template variables
`$role`, `$class` and `$backend` (regex matchers, "All" = `.*`) and rates use `$__rate_interval`.
The vLLM panels query the servers' own `vllm:*` series; the Prometheus scrape config must give each
vLLM target a `role` label (baseline|speculative), as deploy/prometheus/prometheus.yml does.
tests/test_prometheus_dashboards.py evaluates every expression below against a real Prometheus.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("specgate.json")
DS = {"type": "prometheus", "uid": "${datasource}"}
RI = "$__rate_interval"
RC = 'role=~"$role",class=~"$class"'
RB = 'role=~"$role",backend=~"$backend"'


@dataclass(frozen=True)
class Target:
    expr: str
    legend: str


@dataclass(frozen=True)
class Panel:
    title: str
    targets: tuple[Target, ...]
    unit: str = "short"
    kind: str = "timeseries"
    width: int = 12
    description: str = ""
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Row:
    title: str
    panels: tuple[Panel, ...]


def quantiles(metric: str, by: str, selector: str, qs: tuple[float, ...] = (0.5, 0.9, 0.99)) -> tuple[Target, ...]:
    legend_labels = " ".join("{{" + lbl.strip() + "}}" for lbl in by.split(","))
    matcher = f"{{{selector}}}" if selector else ""
    return tuple(
        Target(
            f"histogram_quantile({q}, sum by (le, {by}) (rate({metric}_bucket{matcher}[{RI}])))",
            f"p{round(q * 100)} {legend_labels}",
        )
        for q in qs
    )


def mean_of(metric: str, by: str, selector: str) -> str:
    return (
        f"sum by ({by}) (rate({metric}_sum{{{selector}}}[{RI}]))"
        f" / sum by ({by}) (rate({metric}_count{{{selector}}}[{RI}]))"
    )


VLLM_ACCEPTANCE = (
    f'sum by (role, instance) (rate(vllm:spec_decode_num_accepted_tokens_total{{role=~"$role"}}[{RI}]))'
    f' / sum by (role, instance) (rate(vllm:spec_decode_num_draft_tokens_total{{role=~"$role"}}[{RI}]))'
)
VLLM_LENGTH = (
    f'1 + sum by (role, instance) (rate(vllm:spec_decode_num_accepted_tokens_total{{role=~"$role"}}[{RI}]))'
    f' / sum by (role, instance) (rate(vllm:spec_decode_num_drafts_total{{role=~"$role"}}[{RI}]))'
)
VLLM_PER_POSITION = (
    f'sum by (instance, position) (rate(vllm:spec_decode_num_accepted_tokens_per_pos_total{{role=~"$role"}}[{RI}]))'
    f' / on (instance) group_left sum by (instance) (rate(vllm:spec_decode_num_drafts_total{{role=~"$role"}}[{RI}]))'
)

ROWS: tuple[Row, ...] = (
    Row("Routing", (
        Panel("Requests per second by role and class", (
            Target(f"sum by (role, class) (rate(specgate_requests_total{{{RC}}}[{RI}]))", "{{role}} {{class}}"),
        ), unit="reqps", description="Where the gateway sent traffic, per task class."),
        Panel("Share routed to speculative, by class", (
            Target(
                f'sum by (class) (rate(specgate_requests_total{{role="speculative",class=~"$class"}}[{RI}]))'
                f' / sum by (class) (rate(specgate_requests_total{{class=~"$class"}}[{RI}]))',
                "{{class}}",
            ),
        ), unit="percentunit"),
        Panel("Routing decisions by reason", (
            Target(f"sum by (role, reason) (rate(specgate_decisions_total{{{RC}}}[{RI}]))", "{{role}} {{reason}}"),
        ), unit="reqps"),
        Panel("Requests per second by backend instance", (
            Target(f"sum by (backend) (rate(specgate_requests_total{{{RB},class=~\"$class\"}}[{RI}]))",
                   "{{backend}}"),
        ), unit="reqps"),
    )),
    Row("Shared-GPU regimes", (
        Panel("Which server carries each shared GPU (1 = speculative)", (
            Target("specgate_regime_speculative", "{{instance}} {{group}}"),
        ), width=8, description="A baseline and a speculative server on one GPU slow each other, so one of them "
                                "carries the group's traffic: its regime (docs/routing.md). One line per gateway "
                                "replica: they should agree."),
        Panel("Regime mix ratio: predicted cost on the baseline ÷ on the speculative server", (
            Target("specgate_regime_mix_ratio", "{{instance}} {{group}}"),
        ), width=8, description="The group's recent requests priced with each server carrying them (above 1: "
                                "speculation pays). The regime asks for a switch when this leaves "
                                "1 ± SPECGATE_REGIME_SWITCH_MARGIN (5%) and takes it at the carrying server's next "
                                "lull; above SPECGATE_REGIME_SPECULATION_MAX_LOAD it is capped below the band."),
        Panel("Regime switches", (
            Target(f"increase(specgate_regime_switches_total[{RI}])", "{{instance}} {{group}}"),
        ), width=8, description="Each switch co-runs both servers while the old one drains. One line per gateway "
                                "replica, as SpecgateRegimeFlapping counts them (a sum would count one switch once "
                                "per replica). More than a few an hour means the mix sits near 1."),
        Panel("Live migration: requests moved on a switch, by reason", (
            Target(f"sum by (reason) (increase(specgate_migrations_total[{RI}]))", "{{reason}}"),
            Target(f"sum(rate(specgate_migration_seconds_sum[{RI}])) / "
                   f"clamp_min(sum(rate(specgate_migration_seconds_count[{RI}])), 1e-9)", "mean seconds to resume"),
        ), width=8, description="With SPECGATE_MIGRATION on, a switch moves the leaving server's running streams "
                                "to the arriving server (switch); not_worth: left to finish where they were (their "
                                "re-prefill would cost more than what they had left)."),
    )),
    Row("Speculative acceptance", (
        Panel("Learned tokens per step (mean acceptance length), by class", (
            Target('specgate_learned_tokens_per_step{class=~"$class"}', "{{class}} {{temperature}}"),
        ), description="The gateway learner's per-class estimate (1 = nothing accepted, γ+1 = all)."),
        Panel("Learned acceptance rate, by class", (
            Target('specgate_learned_acceptance_rate{class=~"$class"}', "{{class}} {{temperature}}"),
        ), unit="percentunit"),
        Panel("Acceptance rate: gateway scrape vs vLLM counters", (
            Target(f"specgate_backend_acceptance_rate{{{RB}}}", "gateway {{backend}}"),
            Target(VLLM_ACCEPTANCE, "vLLM {{instance}}"),
        ), unit="percentunit",
               description="accepted / draft tokens: specgate_backend_acceptance_rate and "
                           "rate(vllm:spec_decode_num_accepted_tokens_total) / "
                           "rate(vllm:spec_decode_num_draft_tokens_total)."),
        Panel("Mean acceptance length: gateway scrape vs vLLM counters", (
            Target(f"specgate_backend_mean_acceptance_length{{{RB}}}", "gateway {{backend}}"),
            Target(VLLM_LENGTH, "vLLM {{instance}}"),
        ), description="1 + accepted tokens / drafts (tokens per engine step)."),
        Panel("vLLM acceptance by draft position", (
            Target(VLLM_PER_POSITION, "{{instance}} pos {{position}}"),
        ), unit="percentunit", width=24),
    )),
    Row("Latency", (
        Panel("Time to first token", quantiles("specgate_time_to_first_token_seconds", "role, class", RC), unit="s"),
        Panel("Inter-chunk gap (per engine step)", quantiles("specgate_inter_chunk_seconds", "role, class", RC),
              unit="s"),
        Panel("End-to-end latency", quantiles("specgate_request_duration_seconds", "role, class", RC), unit="s"),
        Panel("Time per output token", quantiles("specgate_time_per_output_token_seconds", "role, class", RC),
              unit="s"),
        Panel("Output tokens per second", (
            Target(f"sum by (role, class) (rate(specgate_output_tokens_total{{{RC}}}[{RI}]))", "{{role}} {{class}}"),
            Target(f'sum by (role) (rate(vllm:generation_tokens_total{{role=~"$role"}}[{RI}]))', "vLLM {{role}}"),
        )),
        Panel("vLLM end-to-end and TTFT p90 (server side)", (
            Target(f'histogram_quantile(0.9, sum by (le, role) (rate(vllm:e2e_request_latency_seconds_bucket'
                   f'{{role=~"$role"}}[{RI}])))', "e2e p90 {{role}}"),
            Target(f'histogram_quantile(0.9, sum by (le, role) (rate(vllm:time_to_first_token_seconds_bucket'
                   f'{{role=~"$role"}}[{RI}])))', "ttft p90 {{role}}"),
        ), unit="s"),
    )),
    Row("Prediction", (
        Panel("Predicted vs observed mean end-to-end latency", (
            Target(mean_of("specgate_predicted_duration_seconds", "role, class", RC), "predicted {{role}} {{class}}"),
            Target(mean_of("specgate_request_duration_seconds", "role, class", RC), "observed {{role}} {{class}}"),
        ), unit="s"),
        Panel("Prediction error |predicted − observed| / observed", quantiles(
            "specgate_prediction_error_ratio", "role", 'role=~"$role"', (0.5, 0.9)), unit="percentunit"),
        Panel("Learned step time at current load", (
            Target('specgate_learned_step_seconds{role=~"$role"}', "{{role}}"),
        ), unit="s"),
        Panel("Learned mean output tokens, by class", (
            Target('specgate_learned_output_tokens{class=~"$class"}', "{{class}} {{temperature}}"),
        )),
    )),
    Row("Load", (
        Panel("In-flight requests (gateway)", (
            Target(f"sum by (backend) (specgate_inflight_requests{{{RB}}})", "{{backend}}"),
        )),
        Panel("Running requests", (
            Target(f"specgate_backend_running_requests{{{RB}}}", "gateway scrape {{backend}}"),
            Target('sum by (role, instance) (vllm:num_requests_running{role=~"$role"})', "vLLM {{role}}"),
        )),
        Panel("Waiting requests", (
            Target(f"specgate_backend_waiting_requests{{{RB}}}", "gateway scrape {{backend}}"),
            Target('sum by (role, instance) (vllm:num_requests_waiting{role=~"$role"})', "vLLM {{role}}"),
        )),
        Panel("KV-cache usage", (
            Target(f"specgate_backend_kv_cache_usage_ratio{{{RB}}}", "gateway scrape {{backend}}"),
            Target('max by (role, instance) (vllm:kv_cache_usage_perc{role=~"$role"})', "vLLM {{role}}"),
        ), unit="percentunit"),
    )),
    Row("Gateway", (
        Panel("Gateway overhead (request received → upstream sent)", quantiles(
            "specgate_gateway_overhead_seconds", "job", "", (0.5, 0.9, 0.99)), unit="s"),
        Panel("Error responses per second by status", (
            Target(f'sum by (backend, status) (rate(specgate_requests_total{{{RB},status!~"2.."}}[{RI}]))',
                   "{{backend}} {{status}}"),
        ), unit="reqps"),
        Panel("Upstream errors and failovers", (
            Target(f"sum by (backend, reason) (rate(specgate_upstream_errors_total{{{RB}}}[{RI}]))",
                   "error {{backend}} {{reason}}"),
            Target(f"sum by (backend) (rate(specgate_failovers_total{{{RB}}}[{RI}]))", "failover {{backend}}"),
            Target(f"sum by (backend) (increase(specgate_backend_ejections_total{{{RB}}}[{RI}]))",
                   "ejections {{backend}}"),
        ), unit="short"),
        Panel("Responses per second by status", (
            Target(f"sum by (status) (rate(specgate_requests_total{{{RB},class=~\"$class\"}}[{RI}]))", "{{status}}"),
        ), unit="reqps", description="status is the HTTP status sent to the client, or 'aborted'."),
    )),
    Row("Health", (
        Panel("Backend up (gateway view: healthy and not ejected)", (
            Target(f"specgate_backend_up{{{RB}}}", "{{backend}}"),
        ), kind="stat", width=8, options={"mappings": "updown"}),
        Panel("vLLM scrape targets up", (
            Target('up{role=~"baseline|speculative"}', "{{role}} {{instance}}"),
        ), kind="stat", width=8, options={"mappings": "updown"}),
        Panel("Gateway up / draining", (
            Target('up{job="specgate"}', "up {{instance}}"),
            Target("specgate_draining", "draining {{instance}}"),
        ), kind="stat", width=8),
    )),
)


def _variables() -> list[dict[str, Any]]:
    def query_var(name: str, label: str, metric: str) -> dict[str, Any]:
        q = f"label_values({metric}, {name})"
        return {
            "name": name, "label": label, "type": "query", "datasource": DS,
            "query": {"query": q, "refId": f"{name}-values"}, "definition": q,
            "refresh": 2, "multi": True, "includeAll": True, "allValue": ".*",
            "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
            "options": [], "sort": 1, "hide": 0,
        }

    return [
        {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
         "current": {}, "hide": 0, "refresh": 1, "regex": "", "options": []},
        query_var("role", "Role", "specgate_backend_up"),
        query_var("class", "Class", "specgate_requests_total"),
        query_var("backend", "Backend", "specgate_backend_up"),
    ]


def _panel_json(panel: Panel, pid: int, x: int, y: int) -> dict[str, Any]:
    targets = [
        {"refId": chr(ord("A") + i), "datasource": DS, "expr": t.expr, "legendFormat": t.legend, "range": True}
        for i, t in enumerate(panel.targets)
    ]
    defaults: dict[str, Any] = {"unit": panel.unit}
    if panel.options.get("mappings") == "updown":
        defaults["mappings"] = [{"type": "value", "options": {
            "0": {"text": "DOWN", "color": "red"}, "1": {"text": "UP", "color": "green"}}}]
        defaults["thresholds"] = {"mode": "absolute", "steps": [
            {"color": "red", "value": None}, {"color": "green", "value": 1}]}
    out: dict[str, Any] = {
        "id": pid, "type": panel.kind, "title": panel.title, "datasource": DS,
        "gridPos": {"h": 8, "w": panel.width, "x": x, "y": y},
        "targets": targets, "fieldConfig": {"defaults": defaults, "overrides": []},
    }
    if panel.description:
        out["description"] = panel.description
    if panel.kind == "timeseries":
        out["options"] = {"legend": {"displayMode": "table", "placement": "bottom", "calcs": ["mean", "max"]},
                          "tooltip": {"mode": "multi", "sort": "desc"}}
    else:
        out["options"] = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                          "colorMode": "background", "textMode": "value_and_name"}
    return out


def build_dashboard() -> dict[str, Any]:
    panels: list[dict[str, Any]] = []
    pid, y = 1, 0
    for row in ROWS:
        panels.append({"id": pid, "type": "row", "title": row.title, "collapsed": False,
                       "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
        pid, y, x = pid + 1, y + 1, 0
        for panel in row.panels:
            if x + panel.width > 24:
                x, y = 0, y + 8
            panels.append(_panel_json(panel, pid, x, y))
            pid, x = pid + 1, x + panel.width
        y += 8
    return {
        "uid": "specgate-overview",
        "title": "specgate: baseline vs speculative routing",
        "description": "specgate gateway and its vLLM baseline + speculative pair",
        "tags": ["specgate", "vllm", "speculative-decoding"],
        "timezone": "browser", "editable": True, "graphTooltip": 1,
        "schemaVersion": 39, "version": 1, "refresh": "10s",
        "time": {"from": "now-30m", "to": "now"},
        "templating": {"list": _variables()},
        "annotations": {"list": [{"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
                                  "enable": True, "hide": True, "name": "Annotations & Alerts",
                                  "type": "dashboard", "iconColor": "rgba(0, 211, 255, 1)"}]},
        "links": [],
        "panels": panels,
    }


def dashboard_targets(dashboard: dict[str, Any]) -> list[tuple[str, str]]:
    """(panel title, PromQL expression) for every target of every panel, rows' nested panels included."""
    out: list[tuple[str, str]] = []
    for panel in dashboard.get("panels", []):
        for inner in [panel, *panel.get("panels", [])]:
            out.extend((inner.get("title", "?"), t["expr"]) for t in inner.get("targets", []))
    return out


def substitute(expr: str, rate_interval: str = "30s", all_value: str = ".*") -> str:
    """Replace Grafana template variables as Grafana would with every variable set to "All"."""
    expr = expr.replace("$__rate_interval", rate_interval).replace("${__rate_interval}", rate_interval)
    for name in ("role", "class", "backend"):
        expr = expr.replace("${" + name + "}", all_value).replace("$" + name, all_value)
    return expr


def render() -> str:
    return json.dumps(build_dashboard(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the committed JSON differs")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not args.out.exists() or args.out.read_text() != text:
            print(f"{args.out} is stale: run python dashboards/build.py", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
