"""What the gateway costs (`specgate bench-overhead`): the command line and results (`cli`), the run's processes
and measurements (`bench`), 1 vs N workers (`workers`), py-spy hot spots (`profile`), and the processes it
starts: the zero-delay backend (`backend`), the bare proxy (`proxy`) and the load generator (`load`, driven
through `procs`); the arithmetic (`stats`) and the Markdown and terminal report (`report`)."""
