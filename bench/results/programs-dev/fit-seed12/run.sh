#!/bin/bash
# Development runs for fitting the calibrator: seed-12 questions, the first 60 per graph, asked of b00dd59 from a
# worktree (/tmp/wt-dev). Looked at while changing code: development data, never reported as final.
cd /tmp/wt-dev
for g in elements geonames social countries airports; do
  .venv/bin/python bench/kgqa_questions.py --graph $g --seed 12 --out /tmp/d57/dev/q/$g-seed12.jsonl
  PYTHONPATH=/tmp/wt-dev .venv/bin/python bench/kgqa.py --questions /tmp/d57/dev/q/$g-seed12.jsonl \
    --limit 60 --out /tmp/d57/dev/results-$g.jsonl --resume >> /tmp/d57/dev/log-$g.txt 2>&1
done
