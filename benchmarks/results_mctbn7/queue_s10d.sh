#!/bin/bash
# session 10, stream D (after stream B): Q3 yeast feature on partitions 1-3 (to compare the forms partition by partition)
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
ulimit -t 3000
R=results_mctbn7
while kill -0 $(cat $R/queue_s10b.pid) 2>/dev/null; do sleep 20; done
for s in 1 2 3; do
/usr/bin/time -v nice -n 5 python growth_stop_mctbn.py --dataset yeast --partition-seed $s --variants '[{"factor": "feature"}]' --out $R/s10_partitions.jsonl > $R/s10_part_yeast_feature_$s.log 2>&1
done
