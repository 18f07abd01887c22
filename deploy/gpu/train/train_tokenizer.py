"""Train a byte-level BPE tokenizer on the training split, tokenize both splits, build the measuring prompts.

Reads --data/train.jsonl and heldout.jsonl (build_corpus.py). Writes to --data:
- `tokenizer/`: tokenizer.json, tokenizer_config.json (the chat template of ../shared/gpu/models/target),
  special_tokens_map.json: what `vllm serve` loads with the model (train_lm.py copies them);
- `train.bin`, `heldout.bin`: uint16 token ids, every document followed by `</s>` (what train_lm.py reads;
  training needs only torch on the GPU machine);
- `prompts.jsonl`: the task-class prompts from the held-out split (tasks.py), with their token counts;
- `tokenizer.json` stats into manifest.json.
Needs `tokenizers` (on this machine, not on the GPU one).

    python deploy/gpu/train/train_tokenizer.py --data deploy/gpu/train/out/data --vocab 12000
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from array import array
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from tasks import build_prompts

SPECIAL = ["<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>"]  # ids 0..4; bos 0, eos 1
CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def read_docs(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def train(texts: list[str], vocab: int) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, min_frequency=2, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer, length=len(texts))
    return tok


def save_tokenizer(tok: Any, out: Path, max_len: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    specials = {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "</s>"}
    (out / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", **specials, "model_max_length": max_len,
        "chat_template": CHAT_TEMPLATE, "clean_up_tokenization_spaces": False, "add_bos_token": False}, indent=1))
    (out / "special_tokens_map.json").write_text(json.dumps(specials, indent=1))


def encode_to(tok: Any, texts: list[str], path: Path, batch: int = 256) -> int:
    eos = tok.token_to_id("</s>")
    ids = array("H")
    for i in range(0, len(texts), batch):
        for enc in tok.encode_batch(texts[i:i + batch]):
            ids.extend(enc.ids)
            ids.append(eos)
    with path.open("wb") as f:
        ids.tofile(f)
    return len(ids)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--vocab", type=int, default=12000)
    p.add_argument("--per-class", type=int, default=24, help="held-out prompts per class (each greedy + sampled)")
    p.add_argument("--max-prompt-tokens", type=int, default=3800, help="+ 256 out must fit 4096")
    p.add_argument("--max-model-len", type=int, default=4096)
    p.add_argument("--seed", type=int, default=39)
    args = p.parse_args(argv)
    train_docs = read_docs(args.data / "train.jsonl")
    held_docs = read_docs(args.data / "heldout.jsonl")
    t0 = time.monotonic()
    tok = train([d["text"] for d in train_docs], args.vocab)
    t_train = time.monotonic() - t0
    assert tok.get_vocab_size() < 65536, "uint16 token files"
    save_tokenizer(tok, args.data / "tokenizer", args.max_model_len)
    n_train = encode_to(tok, [d["text"] for d in train_docs], args.data / "train.bin")
    n_held = encode_to(tok, [d["text"] for d in held_docs], args.data / "heldout.bin")
    prompts = build_prompts(held_docs, args.per_class, args.seed, args.max_prompt_tokens,
                            count_tokens=lambda s: len(tok.encode(s).ids))
    with (args.data / "prompts.jsonl").open("w", encoding="utf-8") as f:
        for pr in prompts:
            f.write(json.dumps(pr.to_json(), ensure_ascii=False) + "\n")
    stats = {"vocab_size": tok.get_vocab_size(), "train_tokens": n_train, "heldout_tokens": n_held,
             "tokenizer_train_s": round(t_train, 1), "total_s": round(time.monotonic() - t0, 1),
             "prompts": len(prompts), "bytes_per_token_train": None}
    text_bytes = sum(len(d["text"].encode("utf-8", "surrogatepass")) for d in train_docs)
    stats["bytes_per_token_train"] = round(text_bytes / max(n_train, 1), 3)
    manifest_path = args.data / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    manifest["tokenizer"] = stats
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    print(json.dumps(stats))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
