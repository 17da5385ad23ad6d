"""Load the second benchmark graph, `countries`, into FalkorDB.

    .venv/bin/python scripts/load_countries.py [--url redis://127.0.0.1:6379] [--graph countries] [--replace]

The data: the country records that the PyPI package `countryinfo` ships as JSON files (requirement:
countryinfo==1.0.1, MIT licence, a 380 KB pure-Python wheel). Chosen because it makes a real multi-label
graph (countries, regions, subregions, languages, currencies, provinces; borders between countries) that
none of the agent code was tuned on, and because it is on PyPI and works offline, which is all this
project's machines reach. Not the Chinook database: that one is kept aside for independent evaluation.

Nothing is downloaded at run time except that package: when it is missing, this installs the pinned
version into the interpreter's environment (.venv), saying so, and then only reads its files. Nothing of
the dataset is committed to this repository. The graph's shape is in bench/kgqa/countries_data.py, which
the benchmark's question generator (bench/kgqa/countries.py) reads too, so the gold answers and the
loaded graph come from the same derivation.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.kgqa import countries_data


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default="redis://127.0.0.1:6379", help="FalkorDB")
    p.add_argument("--graph", default=countries_data.GRAPH_NAME)
    p.add_argument("--replace", action="store_true", help="drop and reload an existing graph")
    args = p.parse_args()
    graph = countries_data.read()
    loaded = asyncio.run(countries_data.load(args.url, args.graph, graph, replace=args.replace))
    edges = sum(len(b) for b in graph.borders.values())
    print(
        f"graph '{args.graph}' at {args.url}: "
        f"{'loaded' if loaded else 'already present, left as is (--replace reloads)'}; "
        f"{len(graph.countries)} countries, {edges} BORDERS edges (both directions), "
        f"{sum(len(p) for p in graph.provinces.values())} provinces"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
