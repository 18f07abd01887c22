"""Realistic workload files for the benchmark, the demo and tests (the format: `items.py`)."""

from gateway.workloads.generate import MIXES, Arrival, generate
from gateway.workloads.items import WorkloadError, WorkloadItem, builtin_names, load_workload, write_workload

__all__ = ["MIXES", "Arrival", "WorkloadError", "WorkloadItem", "builtin_names", "generate", "load_workload",
           "write_workload"]
