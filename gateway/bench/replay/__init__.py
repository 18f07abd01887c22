"""Replaying a workload through policies (`specgate bench`, `specgate demo`): the client, the run, its summary,
the verdict and the terminal display."""
