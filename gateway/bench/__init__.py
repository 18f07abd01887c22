"""`specgate bench`, `specgate demo` and `specgate report`: measure whether speculation and routing pay."""
