#!/usr/bin/env bash
# Every embedded benchmark recorded in bench/RESULTS.md, in one go (about 25 minutes on
# 2 cores). Results land in bench/results/*.json. Data: the shared folder beside the repo.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${RAGLINE_SHARED_DATA:-../shared/data}
OUT=bench/results
mkdir -p "$OUT"
R=.venv/bin/ragline
$R bench squad "$DATA/cmrc2018/trial.json" --json "$OUT/squad_trial.json" >/dev/null
$R bench squad "$DATA/cmrc2018/trial.json" --corpus "$DATA/cmrc2018/train.json" \
  --json "$OUT/squad_trial_with_train_corpus.json" >/dev/null
$R bench squad "$DATA/cmrc2018/train.json" --json "$OUT/squad_train.json" >/dev/null
$R bench docs --docs "$DATA/docs" --questions "$DATA/qa/examples_qa.jsonl" \
  --questions bench/questions/near_miss.jsonl \
  $( [ -f bench/questions/structure_qa.jsonl ] && echo --questions bench/questions/structure_qa.jsonl ) \
  --json "$OUT/docs.json" >/dev/null
for lang in en de fr es it pt ru ja ko; do  # parallel-facet reading sets, nine languages
  $R bench squad "bench/questions/multilingual/$lang.json" --json "$OUT/multilingual_$lang.json" >/dev/null
done
$R bench ingest --docs "$DATA/docs" --json "$OUT/ingest.json" >/dev/null
echo "written: $(ls "$OUT")"
