#!/bin/bash
# The final figures for code-ranked programs: fresh seed-11 questions (generated after the freeze at tag
# programs-frozen), 85 per graph over five public graphs, one of them (elements) never used in development.
# Run from the repository root. Writes report-*.txt next to this script.
set -euo pipefail
HERE=bench/results/kgqa-public/seed11-programs
PY=.venv/bin/python
# 1. As stated by the frozen code's calibrator (fitted on seed-2 development runs of the four older graphs only).
git show programs-frozen:service/calibrator.json > /tmp/calibrator-programs-frozen.json
$PY bench/kgqa.py --score $HERE/results-*.jsonl --calibrator /tmp/calibrator-programs-frozen.json > $HERE/report-as-stated.txt
# 2. Each graph left out of fitting: fitted on the other graphs' seed-11 runs and their seed-2 development runs.
$PY bench/kgqa_calibration.py $HERE/results-*.jsonl --fit-also bench/results/programs-dev/fit/*.jsonl \
    --svg $HERE/risk-coverage.svg > $HERE/report-leave-one-graph-out.txt
echo "written: $HERE/report-as-stated.txt $HERE/report-leave-one-graph-out.txt $HERE/risk-coverage.svg"
