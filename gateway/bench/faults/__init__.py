"""The gateway under injected faults (`python -m gateway.bench.faults`): fault backends (`backend`), the
processes (`system`), load (`load`), scenarios and soak (`scenarios`), the hostile client (`hostile`) and the
Markdown report (`markdown`)."""
