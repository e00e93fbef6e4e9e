#!/bin/bash
# session 8 queue 2: yeast mc switching (folds 0-4), then the IMDB profile
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
R=results_mctbn7
while kill -0 31127 2>/dev/null; do sleep 10; done
(ulimit -t 900; nice -n 5 python growth_stop_mctbn.py --dataset yeast --folds 0,1,2,3,4 --variants '[{"factor": "switching"}]' --out $R/yeast_mc_switch.jsonl > $R/yeast_mc_switch.log 2>&1)
(ulimit -t 1200; nice -n 5 python profile_mctbn_imdb.py --rows 2000 > $R/imdb_profile_2000.txt 2>&1)
