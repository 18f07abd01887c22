"""Profile a running gateway under load with py-spy and boil the samples down to hot spots.

py-spy samples the process tree (`--subprocesses`) without touching it and writes collapsed stacks
(`--format raw`); `hot_spots` turns them into the functions with the most self and total time; `profile`
records one target of a run while the bench drives load through it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.bench.overhead.bench import Bench, Target

RATE_HZ = 250  # py-spy samples per second
_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def py_spy() -> str | None:
    here = Path(sys.executable).parent / "py-spy"
    return str(here) if here.exists() else shutil.which("py-spy")


def start_record(pid: int, out: Path, seconds: float, rate: int = 250) -> subprocess.Popen[bytes] | None:
    exe = py_spy()
    if exe is None:
        return None
    return subprocess.Popen([exe, "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", str(rate),
                             "--subprocesses", "--format", "raw", "--output", str(out), "--nonblocking"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _short(frame: str) -> str:
    m = _FRAME.match(frame.strip())
    if not m:
        return frame.strip()
    path = m["file"]
    for marker in ("site-packages/", "lib/python3", "gateway/"):
        i = path.find(marker)
        if i >= 0:
            path = path[i:] if marker == "gateway/" else path[i + len(marker):]
            break
    return f"{m['func']} ({path})"


def _file(frame: str) -> str:
    return frame.rpartition("(")[2].rstrip(")").split(":")[0]


def hot_spots(collapsed: str, top: int = 25, us_per_sample: float | None = None) -> dict[str, Any]:
    """Self (leaf) and total (anywhere on the stack) share of samples per function; with `us_per_sample` (µs of
    CPU per request that one sample stands for) also as µs per request."""
    self_c: Counter[str] = Counter()
    total_c: Counter[str] = Counter()
    files_c: Counter[str] = Counter()
    files_total: Counter[str] = Counter()
    samples = 0
    prefixes: dict[str, list[str]] = {}  # per stack root: the frames every one of its stacks starts with
    for line in collapsed.splitlines():
        stack, _, count_s = line.rpartition(" ")
        if not stack or not count_s.isdigit():
            continue
        count = int(count_s)
        frames = [_short(f) for f in stack.split(";") if f and not f.startswith("process ")
                  and not f.startswith("thread ")]
        if not frames:
            continue
        samples += count
        prefix = prefixes.setdefault(frames[0], frames)
        common = 0
        while common < min(len(prefix), len(frames)) and prefix[common] == frames[common]:
            common += 1
        prefixes[frames[0]] = prefix[:common]
        self_c[frames[-1]] += count
        for f in set(frames):
            total_c[f] += count
        files_c[_file(frames[-1])] += count
        for f in {_file(frame) for frame in frames}:
            files_total[f] += count

    outer_frames = {f for prefix in prefixes.values() for f in prefix}
    outer_files = {_file(f) for f in outer_frames}

    def pct(c: Counter[str], outer: bool = True) -> list[dict[str, Any]]:
        """Top entries; `outer=False` drops the frames every stack of a thread starts with (main(), the loop)."""
        rows = [(k, v) for k, v in c.most_common() if outer or (k not in outer_frames and k not in outer_files)][:top]
        if not samples:
            return []
        return [{"function": k, "pct": round(100 * v / samples, 1)}
                | ({"us": round(v * us_per_sample, 1)} if us_per_sample is not None else {}) for k, v in rows]

    gateway_total = sum(v for k, v in self_c.items() if "(gateway/" in k)
    return {"samples": samples, "self": pct(self_c), "total": pct(total_c, outer=False),
            "self_by_file": pct(files_c), "total_by_file": pct(files_total, outer=False),
            "gateway_code_self_pct": round(100 * gateway_total / samples, 1) if samples else None,
            "us_per_request": round(samples * us_per_sample, 1) if us_per_sample is not None else None}


def summary_text(spots: dict[str, Any], header: str) -> str:
    per_request = spots.get("us_per_request")
    lines = [header, f"samples: {spots['samples']}; self time in gateway/ code: {spots['gateway_code_self_pct']}%"
             + (f"; {per_request:.0f} µs of CPU per request" if per_request is not None else ""), ""]
    for title, key in (("self % (leaf frames)", "self"),
                       ("total % (anywhere on the stack, less the frames each thread always starts with)", "total"),
                       ("self % by file", "self_by_file"),
                       ("total % by file (time inside the file and what it calls)", "total_by_file")):
        lines.append(title)
        lines += [f"  {row['pct']:5.1f}%  " + (f"{row['us']:6.1f} µs  " if "us" in row else "") + row["function"]
                  for row in spots[key]]
        lines.append("")
    return "\n".join(lines)


def profile(bench: Bench, target: Target, out_dir: Path, stamp: str) -> dict[str, Any] | None:
    """py-spy `target` under c=64 load; the hot spots as shares of its samples and, with the requests served
    while recording, as µs of CPU per request (comparable across targets: `--profile` records the bare proxy
    too)."""
    assert target.proc is not None
    raw = bench.log_dir / f"profile-{target.name}.txt"
    seconds = bench.args.profile_seconds
    recorder = start_record(target.proc.popen.pid, raw, seconds, RATE_HZ)
    if recorder is None:
        bench.notes.append("py-spy not found: no profile (pip install py-spy)")
        return None
    time.sleep(0.5)
    modes = [m.strip() for m in bench.args.modes.split(",") if m.strip()]
    streams = [False, True] if len(modes) != 1 else [modes[0] == "stream"]
    deadline = time.monotonic() + seconds
    i = served = 0
    while time.monotonic() < deadline and recorder.poll() is None:
        bench.job(target, streams[i % len(streams)], bench.args.profile_concurrency, 1000, 0)
        i += 1
        served += 1000
    output = recorder.communicate(timeout=60)[0].decode(errors="replace")
    if recorder.returncode != 0 or not raw.exists():
        bench.notes.append(f"py-spy failed: {output.strip()[-300:]}")
        return None
    spots = hot_spots(raw.read_text(), us_per_sample=1e6 / RATE_HZ / max(served, 1))
    what = "plain and streaming alternating" if len(streams) == 2 else "streaming" if streams[0] else "plain"
    text = summary_text(spots, f"py-spy record of {target.name} (pid tree {target.proc.popen.pid}), "
                                                f"{seconds:.0f}s under c={bench.args.profile_concurrency} load, "
                                                f"{what}, "
                                                f"{served} requests")
    (out_dir / f"overhead-{stamp}-profile-{target.name}.txt").write_text(text + "\n")
    # the samples themselves (collapsed stacks, with line numbers) for a line-level look
    shutil.copyfile(raw, out_dir / f"overhead-{stamp}-profile-{target.name}.collapsed")
    return {"spots": spots, "text": text, "requests": served}
