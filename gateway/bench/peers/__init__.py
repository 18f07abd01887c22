"""Real peer routers (vllm-router, sglang-router) in front of the emulated fleet: `specgate bench --peers`."""
