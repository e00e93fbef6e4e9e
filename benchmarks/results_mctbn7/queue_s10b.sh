#!/bin/bash
# session 10, stream B: Q1 yeast feature (protocol folds), then Q3 emotions both forms on partitions 1-3
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
ulimit -t 3000
R=results_mctbn7
/usr/bin/time -v nice -n 5 python map_check_mctbn.py --dataset yeast --folds 0,1,2,3,4,5,6,7,8,9 --params '{"factor": "feature"}' --out $R/s10_map_check.jsonl > $R/s10_map_yeast_feature.log 2>&1
for s in 1 2 3; do
/usr/bin/time -v nice -n 5 python growth_stop_mctbn.py --dataset emotions --partition-seed $s --variants '[{"factor": "feature"}, {"factor": "switching"}]' --out $R/s10_partitions.jsonl > $R/s10_part_emotions_$s.log 2>&1
done
