"""A vLLM-compatible emulated pair (baseline + speculative) sharing one simulated GPU.

Imports nothing from the gateway's routing code (classify, costmodel, learner, policy).
"""

from .fleet import EmulatedFleet, parse_layout
from .pair import EmulatedPair
from .profiles import PROFILES, Profile, get_profile

__all__ = ["PROFILES", "EmulatedFleet", "EmulatedPair", "Profile", "get_profile", "parse_layout"]
