"""One testing kit shared by tests and benches: a fake vLLM server with injectable faults, free ports,
processes started and waited for (loudly), metric sums through the one parser, one percentile."""
