#!/bin/bash
# Fresh questions (seed 13, generated after the freeze at tag programs-frozen-2), 85 per graph, asked of the
# frozen code from a worktree of the tag. languages: never used in development.
cd /tmp/wt-final  # a worktree of the tag: git worktree add /tmp/wt-final programs-frozen-2
for g in languages elements social countries airports geonames; do
  PYTHONPATH=/tmp/wt-final /work/main/.venv/bin/python bench/kgqa.py --questions /tmp/d57/final/q/$g-seed13.jsonl \
    --limit 85 --out /tmp/d57/final/results-$g.jsonl --resume >> /tmp/d57/final/log-$g.txt 2>&1
  echo "$(date -u +%H:%M) $g done" >> /tmp/d57/final/progress.txt
done
echo ALLDONE >> /tmp/d57/final/progress.txt
