#!/bin/bash
# The final figures for code-ranked programs, second round: fresh seed-13 questions (generated after the freeze at
# tag programs-frozen-2), 85 per graph over six public graphs, one of them (languages) never used in development.
# Run from the repository root. Writes report-*.txt next to this script.
set -euo pipefail
HERE=bench/results/kgqa-public/seed13-programs
PY=.venv/bin/python
# 1. As stated by the frozen code's calibrator (fitted on seed-2, seed-11 and seed-12 runs of the five older graphs).
git show programs-frozen-2:service/calibrator.json > /tmp/calibrator-programs-frozen-2.json
$PY bench/kgqa.py --score $HERE/results-*.jsonl --calibrator /tmp/calibrator-programs-frozen-2.json > $HERE/report-as-stated.txt
# 2. Each graph left out of fitting: fitted on the other graphs' seed-13 runs and every earlier programmed run.
$PY bench/kgqa_calibration.py $HERE/results-*.jsonl --fit-also bench/results/programs-dev/fit/*.jsonl \
    bench/results/programs-dev/fit-seed12/*.jsonl bench/results/kgqa-public/seed11-programs/results-*.jsonl \
    --svg $HERE/risk-coverage.svg > $HERE/report-leave-one-graph-out.txt
echo "written: $HERE/report-as-stated.txt $HERE/report-leave-one-graph-out.txt $HERE/risk-coverage.svg"
