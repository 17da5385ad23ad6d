"""Labelled question answering over a knowledge graph: question sets whose gold answers are computed from
the data, a judge for the agent's answers, and the metrics that say whether its confidence can be trusted.

`bench/kgqa.py` runs it against the real embedded stack; see BENCHMARKS.md for the results."""
