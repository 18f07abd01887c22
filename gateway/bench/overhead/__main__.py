"""`python -m gateway.bench.overhead`: the same as `specgate bench-overhead`."""

import sys

from gateway.bench.overhead.cli import main

sys.exit(main(sys.argv[1:]))
