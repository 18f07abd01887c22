"""`python -m gateway ...` is the same as the `specgate` command."""

import sys

from gateway.cli import main

sys.exit(main(sys.argv[1:]))
