"""Per-class comparison of the policies in one results document, and the plain-words verdict."""

from __future__ import annotations

from typing import Any

from gateway.bench.replay.summary import speedup

GATEWAY_POLICIES = ("adaptive", "clairvoyant", "rules")
PAYS, HURTS = 1.05, 0.95


def gateway_policy(policies: dict[str, Any]) -> str | None:
    return next((p for p in GATEWAY_POLICIES if p in policies), None)


def _word(ratio: float | None) -> str:
    if ratio is None:
        return "unknown"
    if ratio >= PAYS:
        return "pays"
    if ratio <= HURTS:
        return "hurts"
    return "even"


def class_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per task class: speculative's speedup over baseline, acceptance, the gateway's choice."""
    policies = doc["policies"]
    base = policies.get("baseline", {}).get("by_class", {})
    spec = policies.get("speculative", {}).get("by_class", {})
    chosen = gateway_policy(policies)
    gw = policies.get(chosen, {}).get("by_class", {}) if chosen else {}
    rows = []
    for cls in sorted(set(base) | set(spec) | set(gw)):
        b, s, g = base.get(cls), spec.get(cls), gw.get(cls)
        ratio = speedup(b, s)
        routed = (g or {}).get("routed", {})
        total = sum(routed.values())
        best_static = min((x["mean_e2e_s"] for x in (b, s) if x and x.get("mean_e2e_s")), default=None)
        rows.append({
            "class": cls,
            "requests": (b or s or g or {}).get("requests", 0),
            "baseline_mean_e2e_s": (b or {}).get("mean_e2e_s"),
            "speculative_mean_e2e_s": (s or {}).get("mean_e2e_s"),
            "speedup": ratio,
            "speculation": _word(ratio),
            "tokens_per_step": (s or {}).get("speculative_tokens_per_step"),
            "gateway_policy": chosen,
            "gateway_mean_e2e_s": (g or {}).get("mean_e2e_s"),
            "gateway_vs_best_static": round(best_static / g["mean_e2e_s"], 3) if g and g.get("mean_e2e_s")
            and best_static else None,
            "gateway_speculative_share": round(routed.get("speculative", 0) / total, 3) if total else None,
        })
    return rows


def overall(doc: dict[str, Any]) -> dict[str, Any]:
    policies = doc["policies"]
    summaries = {name: p["summary"] for name, p in policies.items()}
    statics = {n: s["mean_e2e_s"] for n, s in summaries.items() if n in ("baseline", "speculative") and s["mean_e2e_s"]}
    best_static = min(statics, key=lambda n: statics[n]) if statics else None
    chosen = gateway_policy(policies)
    out: dict[str, Any] = {"best_static": best_static, "gateway_policy": chosen,
                           "speculative_speedup": speedup(summaries.get("baseline"), summaries.get("speculative"))}
    if chosen and best_static:
        out["gateway_vs_best_static"] = speedup(summaries[best_static], summaries[chosen])
    return out


def sentence(row: dict[str, Any]) -> str:
    ratio, tps, share = row["speedup"], row["tokens_per_step"], row["gateway_speculative_share"]
    parts = []
    if ratio is not None:
        verb = {"pays": "pays", "hurts": "hurts", "even": "is about even"}[row["speculation"]]
        parts.append(f"speculation {verb} ({ratio:.2f}x vs baseline")
        parts[-1] += f", {tps:.2f} tokens/step)" if tps else ")"
    if share is not None:
        parts.append(f"{row['gateway_policy']} sent {share:.0%} to speculative")
    return "; ".join(parts) or "not measured"


def overall_sentence(doc: dict[str, Any]) -> str:
    o = overall(doc)
    bits = []
    if o.get("speculative_speedup") is not None:
        r = o["speculative_speedup"]
        if abs(r - 1.0) < 0.02:
            bits.append("Speculative alone is about as fast as baseline on this traffic")
        else:
            bits.append(f"Speculative alone is {r:.2f}x baseline's speed on this traffic" if r > 1
                        else f"Speculative alone is {1 / r:.2f}x slower than baseline on this traffic")
    if o.get("gateway_vs_best_static") is not None:
        g = o["gateway_vs_best_static"]
        how = ("about as fast as" if abs(g - 1.0) < 0.01 else
               f"{g:.2f}x as fast as" if g >= 1 else f"{1 / g:.2f}x slower than")
        bits.append(f"{o['gateway_policy']} routing is {how} the best single backend ({o['best_static']})")
    return ". ".join(bits) + ("." if bits else "")


def fleet_sentence(doc: dict[str, Any]) -> str | None:
    """The verdict for runs on fleets of one server per GPU (`policy@layout` entries), if any."""
    summaries = {name: p["summary"]["mean_e2e_s"] for name, p in doc["policies"].items() if "@" in name}
    statics = {n: v for n, v in summaries.items() if n.startswith("least_loaded@") and v}
    routed = {n: v for n, v in summaries.items() if n.startswith("adaptive@") and v}
    if not statics or not routed:
        return None
    best = min(statics, key=lambda n: statics[n])
    name, value = next(iter(routed.items()))
    ratio = value / statics[best]
    gpus = best.partition("@")[2].split("x")[0]
    how = f"{1 / ratio:.2f}x as fast as" if ratio <= 1 else f"{ratio:.2f}x slower than"
    return (f"On {gpus} GPUs with a server each ({name.partition('@')[2].replace('+', ' + ')}), adaptive routing "
            f"per request is {how} the best same-size static fleet ({best.partition('@')[2]}): where servers do "
            f"not share a GPU, sending each class where it runs faster pays; on one shared GPU, consolidating does.")
