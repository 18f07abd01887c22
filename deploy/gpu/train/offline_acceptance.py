# mypy: allow-untyped-decorators
"""Draft-model acceptance per task class without vLLM: speculative decoding simulated in torch (a cross-check).

    python deploy/gpu/train/offline_acceptance.py --target DIR --draft DIR --prompts DATA/prompts.jsonl

For each prompt (tasks.py; greedy and sampled), the draft proposes gamma tokens (sampled at the request's
temperature, or argmax), the target scores them in one pass and accepts each with min(1, p/q) (greedy: iff it
is the target's argmax); the first rejection is replaced by a sample of max(p - q, 0) (greedy: the argmax);
after a fully accepted run the target adds its bonus token. That is the rule vLLM's rejection sampler applies,
so per class the acceptance rate, mean acceptance length and tokens per step should match vLLM's counters on
the same models up to sampling noise. No KV cache (every step recomputes): for small models and short outputs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).parent))
from check_hf import load_own


def probs(logits: torch.Tensor, t: float) -> torch.Tensor:
    if t <= 0:
        return torch.nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).float()
    return torch.softmax(logits.float() / t, dim=-1)


@torch.no_grad()
def speculate(target: Any, draft: Any, ids: list[int], max_tokens: int, t: float, gamma: int, eos: int,
              gen: torch.Generator) -> dict[str, int]:
    """One request: counts of steps, drafted and accepted tokens, generated tokens."""
    out = list(ids)
    steps = drafted = accepted = 0
    while len(out) - len(ids) < max_tokens:
        props, qs = [], []
        ctx = list(out)
        for _ in range(gamma):
            q = probs(draft(torch.tensor([ctx]))[0, -1], t)
            tok = int(torch.multinomial(q, 1, generator=gen)) if t > 0 else int(q.argmax())
            props.append(tok)
            qs.append(q)
            ctx.append(tok)
        p_all = probs(target(torch.tensor([ctx]))[0, len(out) - 1:], t)  # gamma + 1 positions
        steps, drafted = steps + 1, drafted + gamma
        new: list[int] = []
        for i, tok in enumerate(props):
            p, q = p_all[i], qs[i]
            if float(torch.rand(1, generator=gen)) < min(1.0, float(p[tok] / max(float(q[tok]), 1e-12))):
                new.append(tok)
                accepted += 1
                continue
            resid = torch.clamp(p - q, min=0)
            resid = resid / resid.sum() if float(resid.sum()) > 0 else p
            new.append(int(torch.multinomial(resid, 1, generator=gen)) if t > 0 else int(p.argmax()))
            break
        else:
            bonus = p_all[gamma]
            new.append(int(torch.multinomial(bonus, 1, generator=gen)) if t > 0 else int(bonus.argmax()))
        for tok in new:
            out.append(tok)
            if tok == eos or len(out) - len(ids) >= max_tokens:
                return {"steps": steps, "drafted": drafted, "accepted": accepted, "generated": len(out) - len(ids)}
    return {"steps": steps, "drafted": drafted, "accepted": accepted, "generated": len(out) - len(ids)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", type=Path, required=True)
    p.add_argument("--draft", type=Path, required=True)
    p.add_argument("--prompts", type=Path, required=True)
    p.add_argument("--per-class", type=int, default=4, help="prompts per class and mode")
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--max-prompt-tokens", type=int, default=512, help="keep the prompt's last this many tokens")
    p.add_argument("--gamma", type=int, default=4)
    p.add_argument("--seed", type=int, default=39)
    args = p.parse_args(argv)
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(args.target / "tokenizer.json"))
    eos = tok.token_to_id("</s>")
    target, draft = load_own(args.target), load_own(args.draft)
    gen = torch.Generator().manual_seed(args.seed)
    sums: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    seen: dict[str, int] = defaultdict(int)
    for line in args.prompts.read_text().splitlines():
        pr = json.loads(line)
        key = f"{pr['cls']}/{pr['mode']}"
        if seen[key] >= args.per_class:
            continue
        seen[key] += 1
        ids = tok.encode(pr["prompt"]).ids[-args.max_prompt_tokens:]
        r = speculate(target, draft, ids, min(pr["max_tokens"], args.max_tokens), pr["temperature"], args.gamma, eos,
                      gen)
        for k, v in r.items():
            sums[key][k] += v
    result = {}
    for key, s in sums.items():
        result[key] = {**s, "acceptance_rate": round(s["accepted"] / max(s["drafted"], 1), 4),
                       "mean_acceptance_length": round(1 + s["accepted"] / max(s["steps"], 1), 3),
                       "tokens_per_step": round(s["generated"] / max(s["steps"], 1), 3)}
        print(json.dumps({"segment": key, **result[key]}), flush=True)
    print(json.dumps({"offline_acceptance": result, "gamma": args.gamma, "per_class": args.per_class}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
