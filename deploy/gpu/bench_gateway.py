"""The gateway under test: `python -m gateway serve` as a child process with one policy, fresh per run."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench_probe import http_get


def split_policy(spec: str) -> tuple[str, str | None]:
    """`adaptive@2` -> ("adaptive", "2"): the policy and the gateway's SPECGATE_RANDOM_SEED for this run."""
    policy, _, seed = spec.partition("@")
    return policy, (seed or None)


class Gateway:
    def __init__(self, args: argparse.Namespace, policy_spec: str, log_path: Path) -> None:
        self.url = f"http://127.0.0.1:{args.gateway_port}"
        policy, seed = split_policy(policy_spec)
        env = dict(os.environ)
        env.update({
            "SPECGATE_BASELINE_URLS": args.baseline_url, "SPECGATE_SPECULATIVE_URLS": args.speculative_url,
            "SPECGATE_POLICY": policy, "SPECGATE_PORT": str(args.gateway_port), "SPECGATE_HOST": "127.0.0.1",
            "SPECGATE_LOG_REQUESTS": "true", "SPECGATE_NUM_SPECULATIVE_TOKENS": str(args.num_speculative_tokens),
        })
        for kv in args.gateway_env:
            k, _, v = kv.partition("=")
            env[k] = v
        if seed is not None:  # after --gateway-env: the per-run seed wins
            env["SPECGATE_RANDOM_SEED"] = seed
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([sys.executable, "-m", "gateway", "serve"], env=env, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def ready(self, timeout_s: float) -> bool:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                return False
            if http_get(self.url + "/ready", 2.0)[0] == 200:
                return True
            time.sleep(0.3)
        return False

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()
        return self.proc.returncode
