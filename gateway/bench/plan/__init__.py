"""`specgate plan --gpus N`: which layout should N GPUs run for this traffic?

Layouts of N GPUs: k speculative servers and N − k baseline servers, each with a GPU of its own
(k = 0..N); N baseline + speculative pairs (one per GPU); and, where the profile drafts by n-gram lookup,
k dynamic-K speculative servers (vLLM's `num_speculative_tokens_per_batch_size`: γ = 4 up to 4 running
requests, 2 up to 16, none above) and N − k baseline ones. The workload is a file (`--workload`) or what a
running gateway has served (`--from URL`: class and temperature mix, arrival rate and lengths from its
`/metrics`, each class's acceptance from `/admin/state`).

A quick analytic pass (the cost model's step priors, each request's lengths and tokens per step, per-role
load by Little's law) predicts every layout's mean latency at each load; layouts predicted more than
`--prune-above` × the best at every load are not replayed, nor any beyond the `--keep` closest, and the
output says which and why. The rest are replayed through specgate (adaptive) on the emulated fleet at
each load multiplier (arrival times divided by it), at an accelerated time scale. Printed: a table (mean,
p90 e2e, p90 TTFT, throughput per layout and load), the recommendation (lowest mean at each load) and a
plot; written: the results JSON (and the plot beside it).

Modules: `layouts` (what N GPUs can run), `analytic` (the pruning pass), `source` (`--from`), `replay`
(one layout on the emulator), `report` (table, verdicts, plot), `cli` (pruning, runs, JSON).
"""

from __future__ import annotations

from gateway.bench.plan.analytic import Shape, analytic_mean_s, shapes
from gateway.bench.plan.cli import main, parser, plan
from gateway.bench.plan.layouts import Layout, layouts

__all__ = ["Layout", "Shape", "analytic_mean_s", "layouts", "main", "parser", "plan", "shapes"]
