"""The pure routing core: plain data in, decision out.

Nothing here does I/O, reads the clock, draws random numbers or imports aiohttp/asyncio
(`tests/test_architecture.py` holds that wall for every module in this folder). The HTTP edge and the fleet
plumbing around it (`gateway/*.py`) call into it; it never calls out.
"""
