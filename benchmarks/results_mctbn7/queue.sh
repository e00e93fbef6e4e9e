#!/bin/bash
# session 8 queue: runs one after another, niced, CPU-limited
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
R=results_mctbn7
while pgrep -f "learner ctbn --dataset enron" >/dev/null; do sleep 15; done
for ds in yeast scene; do
  (ulimit -t 600; nice -n 5 python growth_stop_mctbn.py --learner ctbn --dataset $ds --variants '[{}, {"factor": "switching"}]' --out $R/${ds}_ctbn.jsonl > $R/${ds}_ctbn.log 2>&1)
done
(ulimit -t 1200; nice -n 5 python profile_mctbn_imdb.py --rows 2000 > $R/imdb_profile_2000.txt 2>&1)
