"""specgate: an OpenAI-compatible gateway that routes each request to a baseline or a speculative vLLM server."""

__version__ = "0.1.0"
