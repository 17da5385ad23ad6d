"""Attack tests use the same real parts as the integration tests: the session-wide servers come from
tests/conftest.py, the time-skipping server and the scripted-LLM harness from the integration layer."""

from tests.integration.conftest import harness_factory, seed_graph, skipping_env

__all__ = ["harness_factory", "seed_graph", "skipping_env"]
