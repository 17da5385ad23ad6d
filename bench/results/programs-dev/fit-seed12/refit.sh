#!/bin/bash
# The shipped calibrator (service/calibrator.json), fitted on every labelled run of code-ranked programs so far:
# these seed-12 development runs (60 per graph, run.sh), the seed-2 development runs (../fit) and the seed-11
# runs reported before (../../kgqa-public/seed11-programs). The languages graph is in none of them.
# Run from the repository root; writes the leave-one-graph-out report of the seed-12 runs next to this script.
set -euo pipefail
HERE=bench/results/programs-dev/fit-seed12
.venv/bin/python bench/kgqa_calibration.py $HERE/*.jsonl \
    --fit-also bench/results/programs-dev/fit/*.jsonl bench/results/kgqa-public/seed11-programs/results-*.jsonl \
    --write-calibrator service/calibrator.json > $HERE/report-leave-one-graph-out.txt
tail -1 $HERE/report-leave-one-graph-out.txt
