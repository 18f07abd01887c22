# mypy: allow-untyped-decorators
"""Check that a saved model directory loads as Hugging Face's Llama and computes what train_lm.py's module does.

    python deploy/gpu/train/check_hf.py DIR [--prompts DATA/prompts.jsonl]

Reloads model.safetensors into llama.py's module (no dependency but torch), and, if `transformers` is
installed, loads DIR with `LlamaForCausalLM.from_pretrained` and `AutoTokenizer`: compares the logits of both
on a held-out prompt (float32), the greedy continuations, and the chat template with build_corpus's rendering.
Prints one JSON object; exit status 1 if anything disagrees.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).parent))
from llama import LlamaForCausalLM, Shape, read_safetensors


def load_own(d: Path) -> LlamaForCausalLM:
    cfg = json.loads((d / "config.json").read_text())
    shape = Shape(**{f: cfg[f] for f in Shape.__dataclass_fields__})
    model = LlamaForCausalLM(shape)
    state = {k: v.float() for k, v in read_safetensors(d / "model.safetensors").items()}
    model.load_state_dict(state, strict=True)
    model.float().eval()
    return model


@torch.no_grad()
def greedy(model: Any, ids: list[int], n: int, hf: bool = False) -> list[int]:
    out = list(ids)
    for _ in range(n):
        x = torch.tensor([out])
        logits = model(x).logits if hf else model(x)
        out.append(int(logits[0, -1].argmax()))
    return out[len(ids):]


def hf_checks(d: Path, own: LlamaForCausalLM, prompt: str) -> dict[str, Any]:
    from transformers import AutoTokenizer
    from transformers import LlamaForCausalLM as HFLlama

    tok = AutoTokenizer.from_pretrained(str(d))
    hf = HFLlama.from_pretrained(str(d), torch_dtype=torch.float32).eval()
    ids = tok(prompt, add_special_tokens=True)["input_ids"][-256:]
    with torch.no_grad():
        a = own(torch.tensor([ids]))
        b = hf(torch.tensor([ids])).logits
    msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    templ = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    g_own, g_hf = greedy(own, ids, 24), greedy(hf, ids, 24, hf=True)
    return {"transformers": __import__("transformers").__version__, "max_abs_logit_diff": float((a - b).abs().max()),
            "argmax_agree": float((a.argmax(-1) == b.argmax(-1)).float().mean()), "greedy_equal": g_own == g_hf,
            "chat_template_ok": templ == "<|system|>S\n<|user|>U\n<|assistant|>",
            "adds_bos": bool(ids and ids[0] == tok.bos_token_id), "sample": tok.decode(g_hf)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir", type=Path)
    p.add_argument("--prompts", type=Path)
    args = p.parse_args(argv)
    own = load_own(args.dir)
    prompt = "def add(a, b):\n    return"
    if args.prompts and args.prompts.exists():
        prompt = json.loads(args.prompts.read_text().splitlines()[0])["prompt"]
    res: dict[str, Any] = {"dir": str(args.dir), "params": own.num_params(), "reloaded": True}
    try:
        res.update(hf_checks(args.dir, own, prompt))
    except ImportError as e:
        res["transformers"] = f"not installed ({e})"
    print(json.dumps(res))
    ok = res.get("max_abs_logit_diff", 0.0) < 1e-3 and res.get("greedy_equal", True) \
        and res.get("chat_template_ok", True) and not res.get("adds_bos", False)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
