"""Shadow prompt lookup against vLLM 0.26's own n-gram counters (deploy/gpu/results/2026-12-05-trained, H200).

    PYTHONPATH=. .venv-train/bin/python results/shadow-2026-12-05-e/realcheck.py [--out realcheck.json]

Needs deploy/gpu/train/out/data (`run_train_and_measure.sh pack`: the corpus, tokenizer and prompts rebuild
exactly: 6,700,465 train / 782,949 held-out tokens, as train.json of the GPU run). For each (class, mode) segment:
vLLM's measured n-gram tokens per step (generated / (generated - accepted), the counters of the ngram server), and
the shadow's, replayed on the texts each server generated for the same prompts, with the gateway's stand-in
tokenizer and with the model's real BPE tokenizer (k = 4, prompt_lookup 2..4 as the server ran). Aggregated as the
counters are: sum of tokens over sum of steps.
"""
from __future__ import annotations

import argparse
import gzip
import json
import time
from collections import defaultdict
from pathlib import Path

from tokenizers import Tokenizer

from gateway.core.shadow_lookup import LookupConfig, replay, tokenize

RUN = Path("deploy/gpu/results/2026-12-05-trained")
DATA = Path("deploy/gpu/train/out/data")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="results/shadow-2026-12-05-e/realcheck.json")
    args = ap.parse_args()
    prompts = {p["id"]: p for p in map(json.loads, (DATA / "prompts.jsonl").read_text().splitlines())}
    rows = [json.loads(line) for line in gzip.decompress((RUN / "requests.jsonl.gz").read_bytes()).splitlines()]
    real = json.loads((RUN / "results.json").read_text())["servers"]["ngram"]["segments"]
    bpe = Tokenizer.from_file(str(DATA / "tokenizer" / "tokenizer.json"))
    cfg = LookupConfig(k=4, nmin=2, nmax=4, max_prompt_tokens=1 << 20, max_output_tokens=1 << 20)
    capped = LookupConfig(k=4, nmin=2, nmax=4)  # the gateway's bounds
    agg: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0, 0, 0])
    per_request = []
    t_us = []
    for r in rows:
        if "error" in r or r["id"] not in prompts:
            continue
        p = prompts[r["id"]]
        a = agg[(r["label"], r["cls"], r["mode"])]
        t0 = time.perf_counter()
        std = replay(tokenize(p["prompt"]), tokenize(r["text"]), capped)
        t_us.append((time.perf_counter() - t0) * 1e6)
        ids_p = bpe.encode(p["prompt"], add_special_tokens=False).ids
        ids_o = bpe.encode(r["text"], add_special_tokens=False).ids
        real_tok = replay([str(i) for i in ids_p], [str(i) for i in ids_o], cfg)
        for i, x in enumerate((std.tokens, std.steps, real_tok.tokens, real_tok.steps, r.get("tokens", 0),
                               r.get("chunks", 0), 1, real_tok.drafted_steps)):
            a[i] += x
        per_request.append({"id": r["id"], "label": r["label"], "std": std.tokens_per_step,
                            "bpe": real_tok.tokens_per_step, "tokens": r.get("tokens"), "chunks": r.get("chunks")})
    table = []
    for (label, cls, mode), a in sorted(agg.items()):
        seg = real.get(f"{cls}/{mode}", {})
        c = seg.get("counters", {})
        g, acc = c.get("generated", 0), c.get("accepted", 0)
        table.append({"label": label, "cls": cls, "mode": mode, "n": a[6],
                      "vllm_ngram_tps": seg.get("tokens_per_step"),
                      "vllm_drafted_share": c.get("drafts", 0) / (g - acc) if g > acc else None,
                      "shadow_standin_tps": a[0] / a[1], "shadow_bpe_tps": a[2] / a[3],
                      "shadow_bpe_drafted_share": a[7] / a[3],
                      "own_chunks_tps": a[4] / a[5] if a[5] else None})
    t_us.sort()
    out = {"table": table, "shadow_us": {"median": t_us[len(t_us) // 2], "p90": t_us[9 * len(t_us) // 10],
                                         "max": t_us[-1], "n": len(t_us)}}
    Path(args.out).write_text(json.dumps(out, indent=1))
    with gzip.open(Path(args.out).with_suffix(".per-request.json.gz"), "wt") as f:
        json.dump(per_request, f)
    print("| texts of | class | mode | vLLM n-gram tok/step | shadow (stand-in tokens) | shadow (real BPE) | "
          "vLLM drafted share | shadow BPE drafted share |")
    print("|---|---|---|---|---|---|---|---|")
    for t in table:
        print(f"| {t['label']} | {t['cls']} | {t['mode']} | {t['vllm_ngram_tps']:.3f} | "
              f"{t['shadow_standin_tps']:.3f} | {t['shadow_bpe_tps']:.3f} | {t['vllm_drafted_share']:.3f} | "
              f"{t['shadow_bpe_drafted_share']:.3f} |")
    print("shadow cost per request (stand-in, gateway caps), us:", out["shadow_us"])


if __name__ == "__main__":
    main()
