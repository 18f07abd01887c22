"""All tunables, read once from `SPECGATE_*` environment variables (pydantic-settings).

This is the only module that reads the environment. Tests and benchmarks pass values directly:
`Settings(baseline_urls=["http://127.0.0.1:8001"], policy="rules")`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from gateway.core.classify import CLASSES, ClassifierConfig
from gateway.core.costmodel import Role, StepModel
from gateway.core.learner import LearnerConfig
from gateway.core.policy import AdaptiveConfig, PolicyName, RulesConfig
from gateway.core.regime import RegimeConfig

UrlList = Annotated[list[str], NoDecode]
_LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")
KeyList = Annotated[list[SecretStr], NoDecode]


def _split_csv(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class Settings(BaseSettings):
    """Every field is `SPECGATE_<FIELD>` in the environment (lists are comma-separated)."""

    model_config = SettingsConfigDict(env_prefix="SPECGATE_", frozen=True, extra="ignore")

    # --- listening and backends
    host: str = Field("127.0.0.1", description="listen address")
    port: int = Field(8000, description="listen port")
    workers: int = Field(1, ge=1, description="processes sharing the port (SO_REUSEPORT)")
    baseline_urls: UrlList = Field(["http://127.0.0.1:8001"], description="baseline vLLM base URLs, comma-separated")
    speculative_urls: UrlList = Field(["http://127.0.0.1:8002"], description="speculative vLLM base URLs, comma-separated")
    backends: UrlList = Field([], description="the fleet, comma-separated `role=url[@group]` (overrides the two URL lists); servers with the same group share a GPU, no group = a GPU of its own")
    policy: PolicyName = Field("adaptive", description="adaptive | rules | baseline | speculative | round_robin | least_loaded | clairvoyant | hindsight")
    hindsight_map: UrlList = Field([], description="hindsight (benchmarks): `class/bucket=role` entries; others go to baseline")
    oracle_file: Path | None = Field(None, description="clairvoyant: {id: {tokens_per_step, output_tokens}}")

    # --- classification thresholds
    creative_temperature: float = Field(0.8, description="explicit temperature at or above which a request is `creative`")
    long_prompt_tokens: int = Field(3000, description="estimated prompt tokens at or above which a request is `long_context`")
    chars_per_token: float = Field(4.0, description="prompt-size estimate: characters per token")
    default_max_tokens: int = Field(256, description="output length assumed when the request gives no max_tokens (and the learner's prior)")

    # --- `rules` policy
    rules_max_temperature: float = Field(0.7, description="rules: speculative only at or below this temperature")
    rules_max_prompt_tokens: int = Field(2000, description="rules: speculative only for prompts up to this size")
    rules_max_inflight: int = Field(16, description="rules: speculative only while it has fewer requests in flight")
    rules_speculative_classes: UrlList = Field(["structured", "code", "extraction"], description="rules: classes sent to speculative")

    # --- `adaptive` policy, cost model and learner
    margin: float = Field(0.05, ge=0.0, description="speculative must be predicted this much faster")
    explore_rate: float = Field(0.03, ge=0.0, le=0.5, description="share of requests routed to the other backend")
    explore_max_regret: float = Field(1.3, ge=1.0, description="never explore when predicted this many times slower")
    explore_max_output_tokens: float = Field(128.0, ge=1.0, description="explore only with requests expected this short")
    explore_min_observations: int = Field(3, ge=0, description="a temperature bucket with fewer speculative observations (or a class with none) is unmeasured")
    explore_hope_sd: float = Field(2.0, ge=0.0, description="probe a speculative server only if it would serve the request sooner at an acceptance this many posterior sd above the estimate (else the probe cannot change a decision, and on a shared GPU it slows the requests beside it)")
    explore_unmeasured_max_regret: float = Field(3.0, ge=1.0, description="regret cap of a probe while its temperature bucket or class is unmeasured (the cost counts the probe's effect on a co-runner)")
    regime_switch_margin: float = Field(0.05, ge=0.0, description="shared GPU: switch the server that carries the group when the mix is predicted this much cheaper on the other")
    regime_min_dwell_s: float = Field(10.0, ge=0.0, description="shared GPU: seconds a regime holds at least (unless the mix is past the decisive margin), and the horizon over which a switch that is not free must pay for its co-running: the shortest phase of load the regime is meant to follow")
    regime_leave_margin: float = Field(0.0, ge=0.0, description="shared GPU: a speculative regime stays while the mix reads speculation at least 1 / (1 + this) as cheap, and leaves below it (entering still needs SPECGATE_REGIME_SWITCH_MARGIN): the baseline's cost does not hang on an acceptance estimate. At 0.05 (a symmetric band) mixed-phases and member 207 of the family kept their first bet on speculation, 1.07x the baseline alone; at 0 (with the shadow lookup) 1.011x and 1.056x (results/idle-step-2026-12-05-f)")
    regime_decisive_margin: float = Field(0.10, ge=0.0, description="shared GPU: a mix predicted this much cheaper on the other server asks for a switch before the dwell is over")
    regime_enter_cost_factor: float = Field(1.0, ge=0.0, description="shared GPU: a switch into speculation on evidence (free or paid; not a trial) is taken only when its predicted gain exceeds this many times its predicted co-running cost (leaving speculation: SPECGATE_REGIME_SWITCH_COST_FACTOR). With SPECGATE_STARTUP_STEP_PROBES=3, at 2 the bursty built-in's entry at a gain of 2.51 s against 2.27 s (just before a burst that ran slower there) was blocked, 1.026x -> 0.998x, but so was member 510's right one at 0.93 s against 0.81 s (1.037x -> 1.060x); without the probes the reference runs' entries had 7.5-10.7x (results/trial-early-read-2026-12-06-p)")
    regime_switch_cost_factor: float = Field(1.0, ge=0.0, description="shared GPU: a switch that is not free is taken only when its predicted gain exceeds this many times its predicted co-running cost (room for the linear co-running model to miss the queue a burst builds; at 4 a regime left speculation 10 s into a burst it should have left at its start: 1.12x)")
    regime_free_drain_s: float = Field(0.3, ge=0.0, description="shared GPU: a switch the mix asks for is taken when the leaving server's running requests are predicted to end within this (nearly free: new requests time-share the GPU with them no longer), or when its predicted gain over SPECGATE_REGIME_MIN_DWELL_S exceeds the predicted cost of that co-running")
    regime_optimism: float = Field(1.0, ge=0.0, description="shared GPU: the mix is judged with each class's tokens per step this many posterior standard deviations above its mean (optimism while unmeasured; no effect once measured)")
    regime_optimism_load: float = Field(8.0, gt=0.0, description="shared GPU: optimism fades above this many requests committed to a choice (x this/committed; committed: the requests on the GPU at a request's decision, or the group's arrivals during one request if more): a regime chosen on optimism commits every request that arrives before the first answers come back, and at mixed-high's 35 requests/s that was 150 requests on the wrong server")
    regime_follow_band: float = Field(0.10, ge=0.0, description="shared GPU, many gateway replicas: join the regime the servers' gauges show other gateways in, unless this process's own mix ratio is outside 1 ± this band")
    regime_exception_load: float = Field(2.0, ge=0.0, description="shared GPU: while it runs at most this many requests, a request may go to the server the regime keeps idle, when predicted `SPECGATE_REGIME_EXCEPTION_MARGIN` cheaper there (a light GPU is not sticky: e.g. greedy requests to the n-gram server, sampled ones to the baseline)")
    regime_exception_margin: float = Field(0.2, ge=0.0, description="shared GPU: how much cheaper (relative) the other server must be predicted for a request to leave the regime on a light GPU (an idle GPU asks only `SPECGATE_MARGIN`)")
    regime_exception_arrivals: float = Field(0.2, ge=0.0, description="shared GPU: a request leaves the regime (idle or light GPU), or probes the server it keeps idle, only when at most this many of the group's requests are expected to arrive while it runs (its predicted duration x the group's recent arrival rate): they would time-share the GPU with it")
    startup_step_probes: int = Field(0, ge=0, description="shared GPU: at start-up, before /ready, each server of each shared GPU answers this many short streamed completions (3 is enough), one request on the GPU at a time; all but its first (warm-up) teach its step at batch 1, so the idle server's step is measured, not borrowed at the priors' ratio (gateway/quiet_steps.py). Off by default: where the measured ratio is below the priors' 1.5, the hope at the first request crosses the band more often and first-request trials on conversation traffic cost 6-8% (results/evidence-2026-12-06-k); 0 or 1: off")
    # --- live migration
    migration: bool = Field(True, description="shared GPU: on a regime switch, move the leaving server's running streams whose predicted remaining time exceeds their re-prefill to the arriving server (aborted there, resumed from the text so far; docs/routing.md). On since 2026-12-06 n: 31 reference runs 2 above 1.05x the better static (off: 6), member 501 on a real H100 1.028x (off: 1.114x); it costs +0.2-0.4 ms of CPU a non-streamed request on a pair (results/migration-default-2026-12-06-n)")
    midstream_moves: bool = Field(False, description="fleets: every 8 engine steps of a request on a speculative server (a GPU of its own), price it again on its own last 8 steps' tokens per step (its stream shows them) and move it to the least-loaded baseline server when staying is predicted dearer than its prompt and text so far prefilled there (aborted, resumed from the text so far as SPECGATE_MIGRATION does; reason `acceptance`; never a request `migration.not_movable` lists; docs/routing.md)")
    regime_migration_dwell_s: float = Field(10.0, ge=0.0, description="shared GPU, with SPECGATE_MIGRATION on: the dwell (SPECGATE_REGIME_MIN_DWELL_S) is this instead (a switch migration makes cheap could follow shorter phases of load; 3 s was tried with SPECGATE_REGIME_MIGRATION_FREE_SWITCH and did not pay: results/migration-2026-12-05-b)")
    regime_price_cold_cache: bool = Field(True, description="shared GPU: a regime switch's price includes the prefix cache it leaves behind: the prefixes the leaving server holds and recent requests repeat, prefilled again on the arriving server while its requests wait (gateway/core/switch_cache.py; the bursty built-in's entry into speculation was priced 2.2-2.6 s and cost ~7 s, the n-gram server's cache cold for 15 s: results/idle-evidence-2026-12-06-r)")
    regime_migration_free_switch: bool = Field(False, description="shared GPU, with SPECGATE_MIGRATION on: a switch is also free when the requests that would stay after the moves drain within SPECGATE_REGIME_FREE_DRAIN_S and the moves pay for themselves (their prefill again, the arriving server's stall through it and their pace there, below the switch's gain). Off: the cost model underestimates a switch under load by far (family member 45: priced 0.35 s, cost ~18 s), and on 2 of 8 unseen traces this took switches that cost 1.5% and 10% of the trace (results/migration-2026-12-05-b)")
    regime_speculation_max_load: float = Field(16.0, ge=0.0, description="shared GPU: no speculative regime while the GPU's recent mean load (requests running + waiting at each decision) is above this: the batch is already large, and the step models are least reliable there (like vLLM V0's --speculative-disable-by-batch-size and the dynamic-K schedule of deploy/gpu; n-gram paid up to c = 16 on the H200; mixed-high's mean dipped to 21 and a cap of 24 let the regime go speculative there)")
    regime_saturation_stall: bool = Field(True, description="shared GPU: above SPECGATE_REGIME_SPECULATION_MAX_LOAD, learn the seconds of other requests' prefill each step carries (the queue's prompts, chunked into every step, whichever server runs it) and price it in the mix and the predictions; where it is at least the speculative server's own step (the GPU is saturated by prompts) the load cap does not hold, and the mix decides: a request there costs its steps, and one that speculates takes fewer (the Azure code burst and 1200:60 windows: the n-gram server alone 6% faster, the cap held the baseline; results/code-burst-2026-12-06-l). Off: the cap holds at any load, as before")
    regime_evidence: bool | None = Field(None, description="shared GPU: judge the regime on the mix at each class's posterior mean (the evidence) and treat a switch asked for on optimism alone as a trial that ends at once when its own measurements do not read it past the band (docs/routing.md). Off: the regime acts on the optimistic mix. Unset: on where the shadow lookup runs (SPECGATE_SHADOW_LOOKUP), whose reads of the baseline's answers are the evidence an idle n-gram server cannot give: with it, the unseen creative-heavy members 203 and 207 went from 1.08x and 1.06x the better static to ~1.00x (results/evidence-2026-12-05-g). Without the shadow the posterior means are shrunk toward a pessimistic prior (structured-heavy members and the bursty built-in lost up to 1.09x), so it stays off there")
    regime_trial_max_load: float = Field(float("inf"), ge=0.0, description="shared GPU: the mix's optimism alone (classes the speculative server has not run, judged above their mean) starts a trial of the speculative server only on an idle GPU (nothing running on the baseline server) and only while the load it commits (the group's arrivals x a request's cost there) is at most this (default: no bound); a trial ends at once when its measured mix reads below the band (docs/routing.md). At 2, trials never made the bets that structured-heavy floods need")
    regime_trial_min_observations: int = Field(8, ge=0, description="shared GPU: a trial of the speculative server is judged (and ended unless its measured mix reads past the band) only once it has this many acceptance observations of its own: before them the measured mix is the prior that the optimism had already overruled, and under a flood the trial ended before its first answer came back")
    regime_evidence_recent_requests: int = Field(16, ge=0, description="shared GPU: the measured mix (the evidence a regime moves on) is the lower of the whole window's and of its last this many requests' (0: the window's alone): a phase that favours the baseline shows in the window's recent requests first (a 64-request window spans 14 s at 4.5 requests/s)")
    shadow_lookup: bool | None = Field(None, description="n-gram speculative servers: replay vLLM's prompt lookup on the text of responses the baseline served (and of a share of the speculative server's, to calibrate), and take the tokens per step the n-gram server would have reached as acceptance evidence for their class (docs/routing.md, \"Shadow prompt lookup\"). Unset: on where a baseline and an n-gram server share a GPU (the idle server gives no evidence of its own; with the switch price of 2026-12-05 (f) it took the unseen creative-heavy member 202 from 1.113x to 0.997x the better static and bursty from 1.007x to 0.999x, results/idle-step-2026-12-05-f), off on fleets (a speculative server with a GPU of its own is measured where it serves)")
    speculative_method: Literal["ngram", "draft_model", "other"] = Field("ngram", description="how the speculative servers draft (vLLM's speculative_config method): shadow lookup runs only for ngram")
    shadow_prompt_lookup_min: int = Field(2, ge=1, description="shadow lookup: the speculative server's prompt_lookup_min")
    shadow_prompt_lookup_max: int = Field(4, ge=1, description="shadow lookup: the speculative server's prompt_lookup_max")
    shadow_rate_per_s: float = Field(20.0, ge=0.0, description="shadow lookup: at most this many replays a second (each costs ~0.4 ms of CPU at the median, ~5 ms for a 4000-token prompt)")
    shadow_max_prompt_tokens: int = Field(16384, ge=0, description="shadow lookup: the prompt's last this many (stand-in) tokens are searched for matches, as vLLM's prompt lookup searches the whole context; a replay counts against SPECGATE_SHADOW_RATE_PER_S once per 4096 of them. At 4096 (before 2026-12-07) long-context answers quoting a document's early part read 3.67 tokens a step where the emulated n-gram server took 4.28 (the whole prompt: 4.15), and the idle server was under-read (results/shadow-window-2026-12-07-s)")
    shadow_calibration_share: float = Field(0.25, ge=0.0, le=1.0, description="shadow lookup: the share of the speculative server's responses replayed to calibrate the shadow against what the server measured (per temperature bucket)")
    shadow_weight: float = Field(1.0, ge=0.0, description="shadow lookup: a shadow read's weight as acceptance evidence, relative to a response the speculative server served. 1 since 2026-12-06 (q): the reads are unbiased once calibrated (served / shadow 1.00 per class on the Azure code burst), and at 0.5 that burst's entry into speculation hung on how many had landed, missing it in 8 of 90 runs (1.06x); at 1, in 1 of 52 (results/trial-confirm-2026-12-06-q)")
    shadow_default_ratio: float = Field(1.0, ge=0.0, le=2.0, description="shadow lookup, greedy requests: the share of the shadow's gain over one token a step believed until the bucket is calibrated (the real vLLM 0.26 run read 0.97-1.16 of the shadow on the baseline's texts; results/shadow-2026-12-05-e)")
    shadow_default_ratio_sampled: float = Field(0.9, ge=0.0, le=2.0, description="shadow lookup, sampled requests (temperature above 0.05): the same (the shadow sees one sample of the text, the server drafts against the distribution). Real vLLM per class 0.59-1.54, most 0.66-0.93 (results/shadow-2026-12-05-e); the emulated n-gram server 0.82-0.94 in gain (results/idle-evidence-2026-12-06-r). 0.75 until round t: with it the idle n-gram server's sampled classes read dear, and with SPECGATE_STEP_BASE_RATIO at 1.43 members 510 and 901 still stayed on the baseline (1.068x, 1.078x; at 0.9: 1.013x, 1.044x; results/leave-evidence-2026-12-07-t). The per-bucket calibration replaces it once both servers have answered")
    regime_surge_requests: int = Field(16, ge=0, description="shared GPU, in a speculative regime: when the last this many arrivals come at more than twice the window's rate, the mix is priced again at the load that rate builds (Little's law), the regime moves on the lower of it and the evidence, and a leave it asks for is priced at the surge's rate and does not wait for the dwell (member 907 of the family: 1.109x -> 1.016x; results/surge-2026-12-07-u). 0: off")
    regime_window_requests: int = Field(64, ge=1, description="shared GPU: recent requests whose mix decides the regime")
    thompson_sampling: bool = Field(True, description="fleet: sample a class's acceptance from its posterior when choosing a speculative server with its own GPU")
    warmup_requests: int = Field(3, ge=0, description="a backend's first requests after it (re)starts do not teach the timing models")
    explore_unmeasured_rate: float = Field(0.25, ge=0.0, le=1.0, description="probe rate for an unmeasured temperature bucket (one probe at a time)")
    random_seed: int | None = Field(None, description="seed of the exploration draws (for reproducible runs)")
    externality_weight: float = Field(1.0, ge=0.0, description="weight of the delay a request imposes on others")
    ttft_weight: float = Field(0.0, ge=0.0, description="time to first token counted this much again in the adaptive policy's cost, beyond its share of e2e (0: e2e alone), where a GPU is shared by a pair")
    fleet_ttft_weight: float = Field(0.5, ge=0.0, description="the same on a fleet whose servers all have GPUs of their own")
    forgetting: float = Field(0.98, gt=0.5, le=1.0, description="per-observation decay of learned estimates")
    acceptance_copy_kinds: bool = Field(True, description="per-request tokens per step learned by what the request's ask does with the text it pastes (edit / ref / new: `classify.copy_kind`) before its class, temperature and prompt length (`core.acceptance_cells`); off: by class, temperature, then whether it pastes text (as before)")
    num_speculative_tokens: int = Field(4, ge=1, description="γ configured on the speculative server")
    prior_tokens_per_step: float = Field(1.2, description="prior mean acceptance length (tokens per speculative step); low: speculation must earn its traffic")
    prior_weight: float = Field(3.0, ge=0.0, description="prior strength, in observations")
    prior_sampled_scale: float = Field(1.0, ge=0.0, le=1.0, description="sampled requests (temperature >= 0.7): the acceptance prior's gain over one token a step, and its spread, times this (1.0: one prior for all temperatures). Lower says sampled tokens rarely match a draft (n-gram on the H200: sampled requests drafted nothing): at 0.25 creative-heavy traffic stayed off the speculative server from its first request (1.012x the static baseline against 1.023x), but on mixed traffic the speculative server, never measured, was never chosen (mixed-medium 1.026x, bursty 1.00-1.04x by seed, against 0.998x and 0.99x at 1.0)")
    prior_tokens_per_step_sd: float = Field(1.0, ge=0.0, description="spread of the acceptance prior, in tokens per step (how far an unseen class may be from its bucket)")
    prior_step_s: float = Field(0.005, description="prior baseline step time at batch 1 (s)")
    prior_speculative_step_s: float = Field(0.0075, description="prior speculative step time at batch 1 (s)")
    prior_step_per_request_s: float = Field(0.00006, description="prior baseline step-time growth per running request (s; H200, vLLM 0.26, 8B, mixed traffic: 0.066 ms)")
    prior_speculative_step_per_request_s: float = Field(0.00009, description="prior speculative step-time growth per running request (s; the same H200 with n-gram γ = 4: 0.093 ms). The ratio of the two priors is kept when one role borrows the other's measured growth")
    step_slope_tie: float = Field(0.1, ge=0.0, description="how far (relative) one role's step time at batch 1 and growth per running request may differ from the other's scaled by the ratio of their priors (one model on one GPU): a role not yet measured borrows the measured one's, two measured roles keep their own")
    step_base_ratio: float | None = Field(1.43, gt=0.0, description="a speculative server that has served nothing borrows the baseline's measured step at batch 1 (its quiet steps where it has them) outright at this ratio, until both roles' quiet steps measure it; its growth is weighed as before (1.43: CALIBRATION.md's 6.6 / 4.6 ms on the H200; a real H100 pair read 1.42-1.50, the emulated pair 1.41). Unset (the default until round t): borrowed at the priors' ratio (1.5) and weighed against its own prior (7.5 ms): the idle n-gram server's step read 1.55x the baseline's, its evidence ~10% dear, and members 510 and 901 of the family (the n-gram server 7-10% faster) never left the baseline, 1.075x and 1.099x; at 1.43, with a trial asked also where the evidence is above the band but short of its lead, 1.013x and 1.044x, at a cost of ~2% on two cells (public conv 1200:60: a first-request trial; member 1: an entry under load) (results/leave-evidence-2026-12-07-t)")
    step_base_tie: float = Field(0.5, ge=0.0, description="as step_slope_tie, for the step time at batch 1 alone: mostly host time (scheduling, the proposer, the rejection sampler), whose share differs by model size (a speculative step took 1.4x the baseline's on the H200 with an 8B target, 2.6x with the 160M target trained there), so the priors' ratio is a weaker guide than for the growth")
    prior_interference_baseline: float = Field(0.2, ge=0.0, le=1.2, description="prior share of a speculative step a baseline step waits for (H200: ~0.15-0.25)")
    prior_interference_speculative: float = Field(1.0, ge=0.0, le=1.2, description="prior share of a baseline step a speculative step waits for (H200: ~0-1.1)")
    prior_prefill_s_per_token: float = Field(0.00004, description="prior prefill time per prompt token (s)")

    # --- fleet: models and prefix caches (`gateway/fleet_view.py`)
    prefix_aware: bool = Field(True, description="adaptive on a fleet: predict each backend's prefill on the prompt tokens it has not likely cached (an approximate index of the prompts sent to it, sized from its KV capacity)")
    prefix_index_max_blocks: int = Field(65536, ge=1, description="per backend, the most 64-character prompt blocks its prefix index holds (bounded memory, whatever the traffic)")
    prefix_default_kv_tokens: int = Field(262144, ge=1, description="a backend's KV capacity in tokens until its `vllm:cache_config_info` says (num_gpu_blocks x block_size)")
    session_affinity_tie: float = Field(0.02, ge=0.0, description="a client session's (`x-session-id` header, else `user`) last backend is chosen when predicted within this share of the cheapest of its role")

    # --- learned state across restarts and replicas
    state_file: Path | None = Field(None, description="learned state: read at start, written periodically and on shutdown (atomic); unusable files are logged and ignored")
    state_save_interval_s: float = Field(30.0, gt=0.0, description="period of writing SPECGATE_STATE_FILE")
    peers: UrlList = Field([], description="running gateways to warm-start from (GET /admin/learner with the admin key) when there is no state file")
    state_max_weight: float = Field(10.0, ge=0.0, description="an imported estimate counts as at most this many observations (a warm start is a prior, not a lock-in)")

    # --- health, scraping, failover, ejection
    health_interval_s: float = Field(2.0, description="period of GET /health on each backend")
    scrape_interval_s: float = Field(2.0, description="period of the full parse of each backend's /metrics (acceptance counters)")
    load_scrape_interval_s: float = Field(0.25, gt=0.0, description="period of reading running + waiting from each backend's /metrics (the load all replicas route on)")
    load_stale_s: float = Field(2.0, gt=0.0, description="a scraped load older than this is not used (the gateway's own in-flight count is)")
    max_attempts: int = Field(3, ge=1, description="upstream attempts per request (failover before the first byte)")
    backoff_base_s: float = Field(0.02, description="first retry backoff, doubled each retry, ±50% jitter")
    eject_consecutive_failures: int = Field(3, ge=1, description="backend failures in a row that eject it")
    eject_base_cooldown_s: float = Field(5.0, description="first ejection cooldown (doubles on repeat)")
    eject_max_cooldown_s: float = Field(120.0, description="cap on the ejection cooldown")
    max_scrape_bytes: int = Field(1 << 20, ge=4096, description="largest /metrics page read from a backend (a longer one is a failed scrape; vLLM's is ~50 KB)")

    # --- timeouts and limits
    connect_timeout_s: float = Field(2.0, description="upstream TCP connect timeout")
    first_byte_timeout_s: float = Field(120.0, description="upstream time to first byte of a stream; base of the non-streamed timeout")
    nonstream_timeout_per_token_s: float = Field(0.25, ge=0.0, description="non-streamed answers: first-byte timeout + this × max_tokens (total timeout without max_tokens)")
    idle_timeout_s: float = Field(60.0, description="max gap between streamed chunks")
    total_timeout_s: float = Field(900.0, description="whole upstream request")
    max_body_bytes: int = Field(8 * 1024 * 1024, description="request body limit (413 above)")
    drain_timeout_s: float = Field(30.0, description="SIGTERM: time in-flight requests get to finish")
    max_connections_per_backend: int = Field(1024, description="upstream connection pool size per backend")
    header_timeout_s: float = Field(15.0, gt=0.0, description="client connection: time to send a complete request head (also the idle keep-alive limit)")
    body_timeout_s: float = Field(30.0, gt=0.0, description="client connection: time to send the request body (408 after)")
    max_client_connections: int = Field(4096, ge=1, description="open client connections per process; more are closed at once")
    max_response_bytes: int = Field(64 * 1024 * 1024, ge=1024, description="largest non-streamed upstream answer the gateway buffers (502 above)")
    offload_parse_bytes: int = Field(256 * 1024, ge=0, description="request bodies at least this large are parsed in a helper process (0: never)")
    offload_large_parse_bytes: int = Field(2 * 1024 * 1024, ge=0, description="request bodies at least this large are parsed in a second helper process of their own, so a few huge bodies never hold up a medium one")
    parse_queue_bytes: int = Field(32 * 1024 * 1024, ge=0, description="bodies waiting for or in one parse helper, at most (one is always let in); a body beyond is answered 503 parse_queue_full (retryable)")

    # --- auth
    api_keys: KeyList = Field([], description="client API keys, comma-separated (auth off when unset; only blanks refuse to start)")
    api_keys_file: Path | None = Field(None, description="file with one client key per line")
    admin_api_key: SecretStr | None = Field(None, description="key for /admin/* (default: the client keys)")
    upstream_api_key: SecretStr | None = Field(None, description="key sent to the backends as Bearer")

    # --- logging
    log_level: str = Field("INFO", description="log level (JSON lines on stderr)")
    log_requests: bool = Field(True, description="one JSON line per request")
    gc_young_threshold: int = Field(20_000, ge=0, description="allocations between two collections of the youngest generation, with what startup built frozen out of the collector's reach (0: Python's defaults, nothing frozen)")
    regime_min_interval_s: float = Field(0.05, ge=0.0, description="shared GPU: a group's mix ratio is recomputed every 8 decisions, at most this often (a flood of requests does not pay for it on each eighth)")

    _split = field_validator(
        "baseline_urls", "speculative_urls", "backends", "rules_speculative_classes", "hindsight_map", "peers",
        mode="before")(_split_csv)

    @field_validator("api_keys", mode="before")
    @classmethod
    def _no_blank_keys(cls, value: Any) -> Any:
        """`SPECGATE_API_KEYS=" , "` meant to turn auth on: refuse to start rather than run without it."""
        if isinstance(value, str) and value and not value.replace(",", "").strip():
            raise ValueError("SPECGATE_API_KEYS is set but holds no key (only blanks): refusing to run without auth")
        return _split_csv(value)

    @field_validator("api_keys")
    @classmethod
    def _no_blank_key_in_list(cls, keys: list[SecretStr]) -> list[SecretStr]:
        """A blank entry in a list given directly would be a key an empty bearer token matches."""
        if any(not k.get_secret_value().strip() for k in keys):
            raise ValueError("SPECGATE_API_KEYS holds a blank key: refusing to start")
        return keys

    @field_validator("admin_api_key", "upstream_api_key")
    @classmethod
    def _no_blank_secret(cls, key: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        """A blank admin key opened /admin/* to anyone (or to the client keys): set means set to a key."""
        if key is not None and not key.get_secret_value().strip():
            raise ValueError(f"SPECGATE_{(info.field_name or '').upper()} is set but blank: set a key, or unset it")
        return key

    @field_validator("baseline_urls", "speculative_urls")
    @classmethod
    def _strip_slash(cls, urls: list[str]) -> list[str]:
        return [u.rstrip("/") for u in urls]

    @field_validator("backends")
    @classmethod
    def _check_backends(cls, entries: list[str]) -> list[str]:
        for entry in entries:
            parse_backend(entry)
        return entries

    @field_validator("rules_speculative_classes")
    @classmethod
    def _check_classes(cls, names: list[str]) -> list[str]:
        unknown = [n for n in names if n not in CLASSES]
        if unknown:
            raise ValueError(f"unknown task classes {unknown}; known: {', '.join(CLASSES)}")
        return names

    @field_validator("log_level")
    @classmethod
    def _check_log_level(cls, level: str) -> str:
        if level.upper() not in _LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; known: {', '.join(_LOG_LEVELS)}")
        return level

    @field_validator("hindsight_map")
    @classmethod
    def _check_hindsight(cls, entries: list[str]) -> list[str]:
        for entry in entries:
            key, sep, role = entry.partition("=")
            if not sep or "/" not in key or role not in ("baseline", "speculative"):
                raise ValueError(f"hindsight_map entries are class/bucket=role, got {entry!r}")
        return entries

    def topology(self) -> list[BackendSpec]:
        """The backends and their GPU groups. From `backends` when set (no group: a GPU of its own); else the
        two URL lists, where baseline i and speculative i share GPU group `pair-i` (the pair layout of
        `deploy/launch_pair.py`) and an unmatched URL has a GPU of its own."""
        if self.backends:
            specs = [parse_backend(entry) for entry in self.backends]
        else:
            lists: tuple[tuple[Role, list[str]], ...] = (("baseline", self.baseline_urls),
                                                         ("speculative", self.speculative_urls))
            specs = [BackendSpec(role, url, f"pair-{i}") for role, urls in lists for i, url in enumerate(urls)]
        counts: dict[Role, int] = {"baseline": 0, "speculative": 0}
        named = []
        for spec in specs:
            name = f"{spec.role}-{counts[spec.role]}"
            counts[spec.role] += 1
            named.append(BackendSpec(spec.role, spec.url, spec.group or f"gpu-{name}", name))
        sizes = {g: sum(1 for s in named if s.group == g) for g in {s.group for s in named}}
        return [s if sizes[s.group] > 1 or not s.group.startswith("pair-") else
                BackendSpec(s.role, s.url, f"gpu-{s.name}", s.name) for s in named]

    def hindsight(self) -> dict[str, Role]:
        return {key: role for key, _, role in (e.partition("=") for e in self.hindsight_map)}  # type: ignore[misc]

    def classifier_config(self) -> ClassifierConfig:
        return ClassifierConfig(self.creative_temperature, self.long_prompt_tokens, self.chars_per_token,
                                self.default_max_tokens, self.acceptance_copy_kinds)

    def learner_config(self) -> LearnerConfig:
        return LearnerConfig(
            priors={"baseline": StepModel(self.prior_step_s, self.prior_step_per_request_s),
                    "speculative": StepModel(self.prior_speculative_step_s, self.prior_speculative_step_per_request_s)},
            prior_interference={"baseline": self.prior_interference_baseline,
                                "speculative": self.prior_interference_speculative},
            forgetting=self.forgetting, prior_weight=self.prior_weight,
            prior_tokens_per_step=self.prior_tokens_per_step, prior_output_tokens=float(self.default_max_tokens),
            num_speculative_tokens=self.num_speculative_tokens,
            prior_prefill_s_per_token=self.prior_prefill_s_per_token, slope_tie=self.step_slope_tie,
            prior_tokens_per_step_sd=self.prior_tokens_per_step_sd, prior_sampled_scale=self.prior_sampled_scale,
            base_tie=self.step_base_tie, base_ratio=self.step_base_ratio, acceptance_by_kind=self.acceptance_copy_kinds,
            stall_from_load=self.regime_speculation_max_load if self.regime_saturation_stall else float("inf"))

    def rules_config(self) -> RulesConfig:
        return RulesConfig(tuple(self.rules_speculative_classes), self.rules_max_temperature,
                           self.rules_max_prompt_tokens, self.rules_max_inflight)

    def adaptive_config(self) -> AdaptiveConfig:
        return AdaptiveConfig(
            margin=self.margin, explore_rate=self.explore_rate, explore_max_regret=self.explore_max_regret,
            explore_max_output_tokens=self.explore_max_output_tokens, explore_hope_sd=self.explore_hope_sd,
            explore_min_observations=self.explore_min_observations,
            explore_unmeasured_max_regret=self.explore_unmeasured_max_regret,
            explore_unmeasured_rate=self.explore_unmeasured_rate, externality_weight=self.externality_weight,
            exception_load=self.regime_exception_load, exception_margin=self.regime_exception_margin,
            exception_arrivals=self.regime_exception_arrivals, probe_max_load=self.regime_speculation_max_load,
            thompson=self.thompson_sampling, affinity_tie=self.session_affinity_tie, ttft_weight=self.ttft_weight,
            fleet_ttft_weight=self.fleet_ttft_weight)

    def shadow_lookup_on(self, shared_gpu: bool) -> bool:
        """Whether responses are replayed through the n-gram lookup (`shared_gpu`: a baseline and an n-gram server
        share a GPU somewhere in the topology; the unset default)."""
        wanted = self.shadow_lookup if self.shadow_lookup is not None else shared_gpu
        return wanted and self.speculative_method == "ngram"

    def regime_evidence_on(self, shared_gpu: bool) -> bool:
        """Whether shared GPUs' regimes move on the evidence (unset: where the shadow lookup runs)."""
        return self.regime_evidence if self.regime_evidence is not None else self.shadow_lookup_on(shared_gpu)

    def regime_config(self) -> RegimeConfig:
        dwell = self.regime_migration_dwell_s if self.migration else self.regime_min_dwell_s
        return RegimeConfig(self.regime_switch_margin, dwell, self.externality_weight,
                            self.regime_decisive_margin, self.regime_free_drain_s, self.regime_switch_cost_factor,
                            self.regime_speculation_max_load, self.regime_trial_max_load,
                            self.regime_trial_min_observations, self.regime_leave_margin,
                            self.regime_enter_cost_factor)

    def client_keys(self) -> list[bytes]:
        """API keys from `api_keys` and `api_keys_file` (one per line, '#' comments)."""
        keys = [k.get_secret_value().encode() for k in self.api_keys]
        if self.api_keys_file is not None:
            for line in self.api_keys_file.read_text().splitlines():
                line = line.split("#", 1)[0].strip()
                if line:
                    keys.append(line.encode())
            if not keys:
                raise ValueError(f"{self.api_keys_file} holds no key (only blanks or comments): refusing to run without auth")
        return keys

    def redacted(self) -> dict[str, Any]:
        """Effective settings for `/admin/config`; secrets and URL credentials shown as `**********`."""
        out = self.model_dump(mode="json")
        for name in ("baseline_urls", "speculative_urls", "peers"):
            out[name] = [redact_url(u) for u in out[name]]
        out["backends"] = [f"{b.role}={redact_url(b.url)}" + (f"@{b.group}" if b.group else "")
                           for b in map(parse_backend, out["backends"])]
        return out


def redact_url(url: str) -> str:
    """`http://user:pw@host` -> `http://**********@host`: a URL fit to show."""
    scheme, sep, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    if not sep or "@" not in authority:
        return url
    return f"{scheme}://**********@{authority.rsplit('@', 1)[1]}{slash}{path}"


@dataclass(frozen=True, slots=True)
class BackendSpec:
    role: Role
    url: str
    group: str = ""  # GPU group: servers with the same group share a GPU
    name: str = ""


_GROUP = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def parse_backend(entry: str) -> BackendSpec:
    """`role=url[@group]`; the group is the text after the last `@` when it is a plain name (with credentials
    in the URL, give the group explicitly)."""
    role, sep, rest = entry.partition("=")
    role = role.strip()
    if not sep or role not in ("baseline", "speculative"):
        raise ValueError(f"backends entries are role=url[@group] with role baseline|speculative, got {entry!r}")
    url, group = rest.strip(), ""
    head, at, tail = url.rpartition("@")
    if at and _GROUP.fullmatch(tail) and "//" in head:
        url, group = head, tail
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"backend URL must be http(s)://..., got {url!r}")
    return BackendSpec(role, url.rstrip("/"), group)  # type: ignore[arg-type]


def settings_markdown() -> str:
    """The settings reference (`docs/settings.md`), generated from the fields so it cannot drift."""
    lines = ["# Settings", "", "Every tunable is an environment variable `SPECGATE_<FIELD>` read once at start "
             "(`gateway/settings.py`, the only module that reads the environment). Lists are comma-separated. "
             "Regenerate this file with `python -m gateway.settings > docs/settings.md`.", "",
             "| variable | default | meaning |", "|---|---|---|"]
    for name, info in Settings.model_fields.items():
        default = info.default
        shown = (",".join(str(x) for x in default) or "(empty)") if isinstance(default, list) else \
            "(unset)" if default is None else str(default)
        text = (info.description or "").replace("|", "\\|")
        lines.append(f"| `SPECGATE_{name.upper()}` | `{shown}` | {text} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(settings_markdown(), end="")
