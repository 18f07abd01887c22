# ruff: noqa  -- an analysis script, kept as it ran
"""Candidate request-visible copy signals (prototype of the core function)."""
import re
from gateway.core import classify as C
EDIT = C._words("change", "modify", "update", "rename", "refactor", "rewrite", "edit", "fix", "replace", "remove",
                "convert", "reformat", "translate", "correct", "add", "insert", "delete", "make this", "make it",
                "keep everything", "unchanged", "updated", "complete updated", "same code", "as is")
def last_user(b):
    if "messages" not in b: return b.get("prompt", "")
    for m in reversed(b["messages"]):
        if m.get("role") == "user" and isinstance(m.get("content"), str): return m["content"]
    return ""
def instruction(text, head=400, tail=400):
    at = text.find("```")
    if at >= 0:
        n = text.count("```")
        end = text.rfind("```")
        before = text[:at] if at <= head else ""
        return before if n % 2 else before + " " + text[end + 3:][-tail:]
    return text[-tail:]
def kind(b, f):
    t = last_user(b).lower()
    ins = instruction(t)
    w = f" {ins.translate(C._SEPARATORS)} "
    edit = C._any(w, EDIT)
    if f.copy_source and edit: return "edit"
    if f.copy_source: return "ref"
    return "new"
