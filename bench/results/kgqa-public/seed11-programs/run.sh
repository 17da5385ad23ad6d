#!/bin/bash
# Fresh questions (seed 11, generated after the freeze), 85 per graph, asked of the frozen code.
cd /tmp/wt-final
for g in elements social countries airports geonames; do
  PYTHONPATH=/tmp/wt-final /work/main/.venv/bin/python bench/kgqa.py --questions /tmp/d56/final/q/$g-seed11.jsonl \
    --limit 85 --out /tmp/d56/final/results-$g.jsonl --resume >> /tmp/d56/final/log-$g.txt 2>&1
  echo "$(date -u +%H:%M) $g done" >> /tmp/d56/final/progress.txt
done
echo ALLDONE >> /tmp/d56/final/progress.txt
