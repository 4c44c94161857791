#!/usr/bin/env bash
# The parasol command as users meet it: bad input gets a clear message and a non-zero exit,
# outputs are complete or absent. Usage: cli_test.sh PARASOL MPIRUN

source "$(dirname "$0")/command_test.sh" "$@"

expect 2 "--topology full:1: 1 rank; a collective needs at least 2" -- "$parasol" collective-sim --topology full:1
expect 2 "unknown topology 'star:4'" -- "$parasol" collective-sim --topology star:4
expect 2 "--bytes: '4X' is not a size" -- "$parasol" collective-sim --topology ring:4 --bytes 4X
expect 2 "failed nodes apply to torus and mesh only" -- "$parasol" collective-sim --topology ring:4 --failed 1
expect 2 "failed node 99 is not a node of mesh:4x4" -- "$parasol" collective-sim --topology mesh:4x4 --failed 99
expect 2 "cannot reach" -- "$parasol" collective-sim --topology mesh:3x3 --failed 3,4,5
expect 2 "unknown allreduce algorithm 'bogus'" -- "$parasol" collective-sim --topology ring:4 --algo bogus
expect 2 "ft-mesh needs a mesh topology" -- "$parasol" collective-sim --topology ring:4 --algo ft-mesh
printf 'nodes 4\nlink 0 1 10\nlink 1 2 ten\n' > "$tmp/bad.topo"
printf 'nodes 2\nlink 0 1 10 fast\n' > "$tmp/fast.topo"
expect 2 "$tmp/fast.topo:2: latency (us) 'fast' is not a finite number" -- "$parasol" collective-sim --topology "file:$tmp/fast.topo"
expect 2 "$tmp/bad.topo:3: bandwidth (Gbit/s) 'ten' is not a finite number" -- "$parasol" collective-sim --topology "file:$tmp/bad.topo"
expect 2 "$tmp/missing.topo: cannot open: No such file or directory" -- "$parasol" collective-sim --topology "file:$tmp/missing.topo"
expect 2 "The following argument was not expected" -- "$parasol" collective-sim --topology ring:4 --bogus-flag
expect 2 "--sizes: 6 bytes is not a whole number of float32 elements" -- "$parasol" allreduce-bench --sizes 6
expect 2 "$tmp/no/such/dir/out.csv: cannot create file: No such file or directory" -- "$parasol" allreduce-bench --sizes 8 --csv "$tmp/no/such/dir/out.csv"

printf 'name,time,application,num_replicas,batch_size\na,0,cifar10,1,128\nb,x,cifar10,1,128\n' > "$tmp/bad_workload.csv"
expect 2 "$tmp/bad_workload.csv:3: time (s) 'x' is not a finite number" -- "$parasol" cluster-sim --workload "$tmp/bad_workload.csv"
printf 'name,time,application,num_replicas,batch_size\na,inf,cifar10,1,128\n' > "$tmp/inf_workload.csv"
expect 2 "$tmp/inf_workload.csv:2: time (s) 'inf' is not a finite number" -- "$parasol" cluster-sim --workload "$tmp/inf_workload.csv"
expect 2 "--policy 'fifo': goodput, tiresias or optimus" -- "$parasol" cluster-sim --workload "$tmp/bad_workload.csv" --policy fifo
expect 2 "--search 'dp': greedy or exact" -- "$parasol" cluster-sim --workload "$tmp/bad_workload.csv" --search dp
printf 'name,time,application,num_replicas,batch_size\na,0,nosuchapp,1,128\n' > "$tmp/workload.csv"
expect 2 "no profile for application 'nosuchapp'" -- "$parasol" cluster-sim --workload "$tmp/workload.csv" --profiles "$tmp"
expect 2 "--profiles $tmp/none: no such folder" -- "$parasol" cluster-sim --workload "$tmp/workload.csv" --profiles "$tmp/none"
# The default profiles are found from any working folder (the source tree's ../shared), when present.
if [ -d "$(dirname "$0")/../../../shared/data/pollux/profiles" ]; then
  printf 'name,time,application,num_replicas,batch_size\na,0,cifar10,1,128\n' > "$tmp/one.csv"
  label="cluster-sim run from $tmp finds the default profiles"
  check bash -c "cd '$tmp' && '$(readlink -f "$parasol")' cluster-sim --workload one.csv --nodes 1 | grep -q 'average JCT'"
fi

header='name,time,num_replicas,batch_size,steps,train_args'
printf '%s\na,0,1,64,10,--model mlp --batch 8\n' "$header" > "$tmp/bad_jobs.csv"
expect 2 "$tmp/bad_jobs.csv:2: train_args: --batch is set by the cluster, not the job" -- "$parasol" cluster --jobs "$tmp/bad_jobs.csv"
printf '%s\na,0,1,64,10,--model mlp\na,1,3,64,10,--model mlp\n' "$header" > "$tmp/bad_jobs.csv"
expect 2 "$tmp/bad_jobs.csv:3: batch_size 64 does not split over 3 replicas" -- "$parasol" cluster --jobs "$tmp/bad_jobs.csv"
printf '%s\na,0,4,64,10,--model mlp\n' "$header" > "$tmp/jobs4.csv"
expect 2 "job a asks for 4 GPUs; the cluster has 2" -- "$parasol" cluster --jobs "$tmp/jobs4.csv" --gpus 2 --policy tiresias
expect 2 "--policy 'fifo': goodput or tiresias" -- "$parasol" cluster --jobs "$tmp/jobs4.csv" --policy fifo
expect 2 "$tmp/jobs4.csv/work/a/: cannot prepare the job's folder" -- "$parasol" cluster --jobs "$tmp/jobs4.csv" --work-dir "$tmp/jobs4.csv/work"
printf 'h1 slots=2\n\n# spare\nh2 slots=1\n' > "$tmp/hosts"
expect 2 "$tmp/hosts:4: 1 slots; h1 has 2 (every host needs the same number)" -- "$parasol" cluster --jobs "$tmp/jobs4.csv" --hosts "$tmp/hosts"
printf 'h1 slots=x\n' > "$tmp/hosts"
expect 2 "$tmp/hosts:1: slots 'x' is not a whole number" -- "$parasol" cluster --jobs "$tmp/jobs4.csv" --hosts "$tmp/hosts"
printf 'h1 slots=1\nh1 slots=1\n' > "$tmp/hosts"
expect 2 "$tmp/hosts:2: host h1 twice" -- "$parasol" cluster --jobs "$tmp/jobs4.csv" --hosts "$tmp/hosts"
printf 'h1 cpus=1\n' > "$tmp/hosts"
expect 2 "$tmp/hosts:1: 'cpus=1': expected slots=N" -- "$parasol" cluster --jobs "$tmp/jobs4.csv" --hosts "$tmp/hosts"
printf 'h1\nh2\nh3\n' > "$tmp/hosts"
expect 2 "job a asks for 4 GPUs; the cluster has 3" -- "$parasol" cluster --jobs "$tmp/jobs4.csv" --hosts "$tmp/hosts" --policy tiresias
expect 2 "--gpus excludes --hosts" -- "$parasol" cluster --jobs "$tmp/jobs4.csv" --hosts "$tmp/hosts" --gpus 2
expect 2 "--timeout, --restart-penalty and --host-retry >= 0" -- "$parasol" cluster --jobs "$tmp/jobs4.csv" --host-retry -1

# The run options have one meaning in every command: --checkpoint-every without --checkpoint is an
# error, not ignored, and 0 is refused.
for cmd in "lda --corpus $tmp/c.dat" "mf --data synthetic" "train --model mlp" "gnn --graph $tmp" "mlr --data $tmp/d.svm" \
           "mtrl --data $tmp/t.csv" "svm --data $tmp/d.svm"; do
  expect 2 "--checkpoint-every needs --checkpoint" -- "$parasol" $cmd --checkpoint-every 5
  expect 2 "--checkpoint-every: 0 must be >= 1" -- "$parasol" $cmd --checkpoint "$tmp/ck" --checkpoint-every 0
done
expect 2 "--model: alexnet not in {mlp,lenet,resnet20,vgg,transformer-lm,tree-lstm,lstm-lm,tree-fc}" -- "$parasol" train --model alexnet --steps 1
expect 2 "--sync 'eager': after-backward, buckets, wfbp or p3" -- "$parasol" train --sync eager --steps 1
expect 2 "$tmp: no t10k-images-idx3-ubyte[.gz]" -- "$parasol" train --model lenet --dataset mnist --data "$tmp" --steps 1
expect 2 "train.ckpt: cannot open" -- "$parasol" train --model mlp --steps 1 --resume "$tmp/none"
expect 2 "--batch-max 16 is below the total batch 32 (1 rank x --batch 32)" -- "$parasol" train --model mlp --steps 1 --batch-max 16
expect 2 "--batch-file needs --adaptive-batch" -- "$parasol" train --model mlp --steps 1 --batch-file "$tmp/batch"
echo 100 > "$tmp/batch"
expect 2 "$tmp/batch:1: batch per rank 100 is not in [1, 64]" -- "$mpirun" -np 2 "$parasol" train --model mlp \
  --dataset synthetic --samples 256 --steps 4 --no-eval --adaptive-batch --batch-max 128 --batch-file "$tmp/batch"
printf '%s\na,0,1,64,10,--model mlp --batch-max 32\n' "$header" > "$tmp/bad_jobs.csv"
expect 2 "$tmp/bad_jobs.csv:2: train_args: --batch-max 32 is below batch_size 64" -- "$parasol" cluster --jobs "$tmp/bad_jobs.csv"
expect 2 "--device cuda: mlp, lenet, resnet20 or vgg (--model tree-fc trains on CPU)" -- "$parasol" train --model tree-fc \
  --device cuda --steps 1
# Where torch sees no GPU (python exits 0 when there is none).
if "$(dirname "$parasol")/../../.venv/bin/python" -c 'import torch, sys; sys.exit(torch.cuda.is_available())' 2>/dev/null; then
  expect 2 "rank 0: --device cuda: torch sees no CUDA device" -- "$parasol" train --model mlp --device cuda --steps 1
fi
# Only the commands that train libtorch models load it (libparasol_train.so): not --version,
# not the other commands.
label="parasol --version and lasso --help load no libtorch"
check bash -c "! LD_DEBUG=libs '$parasol' --version 2>&1 | grep -q libtorch && ! LD_DEBUG=libs '$parasol' lasso --help 2>&1 | grep -q libtorch"
label="parasol train --help loads libtorch (its module)"
check bash -c "LD_DEBUG=libs '$parasol' train --help 2>&1 | grep -q 'libparasol_train.so' "
label="train --no-eval reports no test accuracy"
check bash -c "'$parasol' train --model mlp --dataset synthetic --samples 256 --steps 2 --no-eval | grep -q ', not evaluated$'"

expect 2 "--eval-only needs --resume DIR (the checkpoint)" -- "$parasol" train --model mlp --steps 1 --eval-only

# --eval-only scores a saved checkpoint: the accuracy the run printed at its end, on 2 ranks too.
"$parasol" train --model mlp --dataset mnist --data "$data/mnist" --steps 40 --checkpoint "$tmp/mlp" --no-progress \
  > "$tmp/trained.txt" 2>&1
trained=$(grep -o 'test accuracy [0-9.]*%' "$tmp/trained.txt" | tail -1)
label="train --eval-only gives the trained run's test accuracy ($trained)"
check bash -c "'$mpirun' -np 2 '$parasol' train --model mlp --dataset mnist --data '$data/mnist' --resume '$tmp/mlp' \
  --eval-only | grep -q '^checkpoint of step 40: $trained, test loss'"

# Under mpirun each rank's output is a terminal (OpenMPI's pty) even when mpirun's goes to a file.
"$mpirun" -np 2 "$parasol" train --model mlp --dataset synthetic --samples 256 --steps 4 --no-eval --no-progress \
  > "$tmp/np.txt" 2>&1
label="train --no-progress under mpirun writes no progress bar into a file"
check test "$(grep -c 'samples/s' "$tmp/np.txt")" -eq 1

# parasol train under mpirun: 2 ranks, P3 over hybrid, a metrics line per step, the SFB choice printed.
runs "$tmp/train.out" "train under mpirun" "$mpirun" -np 2 "$parasol" train --model mlp --dataset synthetic \
  --samples 512 --batch 16 --steps 6 --sync p3 --comm hybrid --metrics "$tmp/train.csv"
if [ "$(head -1 "$tmp/train.csv" 2>/dev/null)" = "step,seconds,step_seconds,samples_per_sec,loss,exposed_comm_fraction,grad_sqr,grad_var_per_sample,noise_scale_samples,test_accuracy,peak_memory_mb" ] &&
   [ "$(wc -l < "$tmp/train.csv")" -eq 7 ] && grep -q "hybrid fc1: 1024x784: .* -> sfb" "$tmp/train.out" &&
   grep -q ", test accuracy [0-9.]*%$" "$tmp/train.out" &&
   tail -1 "$tmp/train.csv" | awk -F, '{ exit !($6 > 0 && $7 > 0 && $8 > 0) }'; then
  echo "ok: train under mpirun"
else
  echo "FAIL: train under mpirun"; cat "$tmp/train.out" "$tmp/train.csv" 2>/dev/null; failures=$((failures + 1))
fi

# Spatial partitioning: an image's rows over 2 processes train what one process trains (the loss of
# every step to 4 decimals); options that cannot be split are refused.
expect 2 "--image-size '40x': HxW or N, whole numbers from 1 to 65536" -- "$parasol" train --model resnet20 \
  --dataset synthetic --image-size 40x --steps 1
expect 2 "--spatial-parallel: for lenet, resnet20 or vgg (images)" -- "$parasol" train --model mlp --steps 1 \
  --spatial-parallel 2
spatial_args=(train --model resnet20 --dataset synthetic --image-size 45x40 --samples 8 --test-samples 4 --batch 2
  --steps 3 --no-progress)
"$parasol" "${spatial_args[@]}" --metrics "$tmp/whole.csv" > /dev/null 2>"$tmp/err" || cat "$tmp/err"
"$mpirun" -np 2 "$parasol" "${spatial_args[@]}" --spatial-parallel 2 --metrics "$tmp/split.csv" > "$tmp/split.out" \
  2>"$tmp/err" || cat "$tmp/err"
label="train --spatial-parallel 2 under mpirun gives one process's losses"
check bash -c "[ \"\$(cut -d, -f5 '$tmp/whole.csv' | cut -c1-6)\" = \"\$(cut -d, -f5 '$tmp/split.csv' | cut -c1-6)\" ] &&
  [ \$(wc -l < '$tmp/split.csv') -eq 4 ] && grep -q ', test accuracy [0-9.]*%$' '$tmp/split.out'"

# A good run writes a complete CSV; JSON output parses.
"$parasol" collective-sim --topology dgx1 --algo treepack --bytes 64M --json > "$tmp/sim.json" || { echo "FAIL: collective-sim --json"; failures=$((failures + 1)); }
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['busbw_gbps'] > 0 and j['bound_s'] > 0 and j['time_s'] > 0" "$tmp/sim.json" \
  && echo "ok: collective-sim --json parses" || { echo "FAIL: collective-sim --json"; failures=$((failures + 1)); }
runs /dev/null "allreduce-bench under mpirun" "$mpirun" -np 2 "$parasol" allreduce-bench --sizes 8,4K \
  --iters 3 --csv "$tmp/bench.csv"
if [ "$(head -1 "$tmp/bench.csv" 2>/dev/null)" = "algo,ranks,bytes,time_us,algbw_gbps,busbw_gbps" ] &&
   [ "$(wc -l < "$tmp/bench.csv")" -eq 13 ] && [ ! -e "$tmp/bench.csv.tmp" ]; then
  echo "ok: allreduce-bench --csv"
else
  echo "FAIL: allreduce-bench --csv"; cat "$tmp/bench.csv" 2>/dev/null; failures=$((failures + 1))
fi

# mf and ps-bench: bad input, a run resumed from its checkpoint ends where a straight run ends,
# the benchmark's CSV.
expect 2 "consistency 'ssp': expected bsp, ssp:STALENESS" -- "$parasol" mf --data synthetic --consistency ssp
expect 2 "--straggler '3': expected WORKER:FACTOR" -- "$parasol" mf --data synthetic --straggler 3
expect 2 "straggler worker 9 does not exist" -- "$parasol" mf --data synthetic --straggler 9:2
printf '1\t2\t3\t100\n4\t5\tfive\t100\n' > "$tmp/bad.data"
expect 2 "$tmp/bad.data:2: rating 'five' is not a finite number" -- "$parasol" mf --data "$tmp/bad.data"
expect 2 "$tmp/missing.data: cannot open: No such file or directory" -- "$parasol" mf --data "$tmp/missing.data"
expect 2 "$tmp/nockpt/MANIFEST: cannot open checkpoint manifest" -- "$parasol" mf --data synthetic --resume "$tmp/nockpt"
expect 2 "--models: bsp is needed" -- "$parasol" ps-bench --data synthetic --models ssp:3

mf=("$parasol" mf --data synthetic --workers 1 --consistency bsp --seed 3 --rank 8)
final() { grep '^final objective' "$1" | awk '{print $3}'; }
runs "$tmp/straight.txt" "mf" "${mf[@]}" --clocks 4
runs /dev/null "mf --checkpoint" "${mf[@]}" --clocks 2 --checkpoint "$tmp/ckpt"
runs "$tmp/resumed.txt" "mf --resume" "${mf[@]}" --clocks 4 --resume "$tmp/ckpt" --metrics "$tmp/resumed.csv"
if [ -n "$(final "$tmp/straight.txt")" ] && [ "$(final "$tmp/straight.txt")" = "$(final "$tmp/resumed.txt")" ] &&
   [ "$(head -1 "$tmp/resumed.csv")" = "clock,seconds,objective" ] && [ "$(sed -n 2p "$tmp/resumed.csv" | cut -d, -f1)" = 2 ]; then
  echo "ok: mf resumed from its checkpoint ends where the straight run ends ($(final "$tmp/straight.txt"))"
else
  echo "FAIL: mf --resume: $(final "$tmp/straight.txt") vs $(final "$tmp/resumed.txt")"; failures=$((failures + 1))
fi
# Several workers: the last clock's figure is the final state's, every update applied.
"$mpirun" -np 2 "$parasol" mf --data synthetic --clocks 3 --workers 2 --consistency essp:1 --metrics "$tmp/mpi.csv" \
  > "$tmp/mpi.txt" 2>"$tmp/err" && [ -n "$(final "$tmp/mpi.txt")" ] &&
  [ "$(tail -1 "$tmp/mpi.csv" | cut -d, -f1,3)" = "3,$(final "$tmp/mpi.txt")" ] \
  && echo "ok: mf under mpirun, the last clock's objective is the final one" \
  || { echo "FAIL: mf under mpirun"; cat "$tmp/err" "$tmp/mpi.csv"; failures=$((failures + 1)); }
# Item rows read one-sided (MPI windows over the shards' rows): the same run's shape, its header says so.
expect 2 "--ps-reads one-sided needs --consistency bsp or ssp:S, not essp:2" -- \
  "$parasol" mf --data synthetic --ps-reads one-sided --consistency essp:2
expect 2 "--ps-reads both: expected two-sided or one-sided" -- "$parasol" mf --data synthetic --ps-reads both
"$mpirun" -np 2 "$parasol" mf --data synthetic --clocks 3 --workers 2 --consistency ssp:1 --ps-reads one-sided \
  > "$tmp/mpi1.txt" 2>"$tmp/err" && grep -q "ssp:1, item rows read one-sided" "$tmp/mpi1.txt" &&
  [ -n "$(final "$tmp/mpi1.txt")" ] \
  && echo "ok: mf under mpirun with item rows read one-sided" \
  || { echo "FAIL: mf --ps-reads one-sided under mpirun"; cat "$tmp/err" "$tmp/mpi1.txt"; failures=$((failures + 1)); }
runs "$tmp/ps.txt" "ps-bench" "$parasol" ps-bench --data synthetic --clocks 3 --repeat 1 \
  --models bsp,ssp:1,asp --straggler 1:2 --csv "$tmp/ps.csv"
if [ "$(head -1 "$tmp/ps.csv" 2>/dev/null)" = "model,consistency,staleness,clock,seconds,objective" ] &&
   grep -q '^mf,ssp,1,' "$tmp/ps.csv" && grep -q '^mf,asp,0,' "$tmp/ps.csv" && grep -q '^ssp:1 ' "$tmp/ps.txt"; then
  echo "ok: ps-bench table and --csv"
else
  echo "FAIL: ps-bench --csv"; cat "$tmp/ps.txt" "$tmp/ps.csv" 2>/dev/null; failures=$((failures + 1))
fi

# parasol cluster, live: on 2 cores, job a shares them with b, then (b done) is resized to both
# by checkpoint and restart and still runs exactly its steps; job c cannot start its model and is
# reported as failed (exit 1) without stopping the others. Where a ends is the policy's call (on
# a slow machine, under ASan, its measured scaling made it go back to 1 rank), so it is not checked.
printf '%s\n%s\n%s\n%s\n' "$header" \
  'a,0,1,256,300,--model mlp --dataset synthetic --samples 4096 --no-eval' \
  'b,0,1,256,40,--model mlp --dataset synthetic --samples 4096 --no-eval --seed 2' \
  'c,0,1,64,10,--model nosuch' > "$tmp/jobs.csv"
"$parasol" cluster --jobs "$tmp/jobs.csv" --gpus 2 --interval 1 --restart-penalty 0 --mpirun "$mpirun" \
  --work-dir "$tmp/cluster" --timeout 120 --csv "$tmp/cluster.csv" > "$tmp/cluster.out" 2>"$tmp/err"
code=$?
if [ "$code" -eq 1 ] && grep -q 'FAILED: job c: train exited with status 2 at step 0 of 10' "$tmp/err" &&
   grep -q '^step 300$' "$tmp/cluster/a/status" &&
   grep -q '^state done$' "$tmp/cluster/a/status" && grep -Eq 'a: (1 -> 2|resumes on 2) GPUs' "$tmp/cluster.out" &&
   grep -q 'b: done after 40 steps' "$tmp/cluster.out" && grep -q "model: nosuch not in" "$tmp/cluster/c/train.log" &&
   [ "$(cut -d, -f1 "$tmp/cluster.csv" | tr '\n' ' ')" = "name a b c " ]; then
  echo "ok: cluster (live resize, failed job reported)"
else
  echo "FAIL: cluster (exit $code)"; cat "$tmp/cluster.out" "$tmp/err" "$tmp/cluster.csv" "$tmp/cluster/a/status" 2>/dev/null
  failures=$((failures + 1))
fi

# An adaptive batch (--batch-max in train_args): the job's runs use --adaptive-batch at totals within
# 64..512, and it ends once its scale-invariant iterations reach its steps (fewer steps when a run's
# batch grew). Which batch a resize picks is the goodput model's call on the measured noise.
printf '%s\n%s\n' "$header" 'a,0,1,64,300,--model mlp --dataset synthetic --samples 4096 --no-eval --batch-max 512' \
  > "$tmp/adaptive.csv"
"$parasol" cluster --jobs "$tmp/adaptive.csv" --gpus 2 --interval 1 --restart-penalty 0 --mpirun "$mpirun" \
  --work-dir "$tmp/adaptive" --timeout 120 > "$tmp/adaptive.out" 2>"$tmp/err"
code=$?
status="$tmp/adaptive/a/status"
if [ "$code" -eq 0 ] && grep -q '^state done$' "$status" && grep -q 'a: starts on 1 GPU, batch 64$' "$tmp/adaptive.out" &&
   awk '$1 == "progress" { p = $2 } $1 == "ranks" { r = $2 } $1 == "batch_per_rank" { b = $2 }
        END { exit !(p >= 300 && r * b >= 64 && r * b <= 512) }' "$status" &&
   grep -q '^# adaptive batch: total batch 64 (base 64)' "$tmp/adaptive/a/train.log"; then
  echo "ok: cluster with an adaptive batch"
else
  echo "FAIL: cluster with an adaptive batch (exit $code)"; cat "$tmp/adaptive.out" "$tmp/err" "$status" 2>/dev/null
  failures=$((failures + 1))
fi

# Options are checked before any work: a bad value or an output path that cannot be written is
# one line and exit code 2 at once, not an error after training (or a silent default).
expect 2 "--lr: 'nan' is not a finite number" -- "$parasol" train --lr nan
expect 2 "--threads: 0 must be >= 1" -- "$parasol" train --threads 0
expect 2 "--momentum: 2 must be <= 1" -- "$parasol" train --momentum 2
expect 2 "--iterations: 0 must be >= 1" -- "$parasol" lda --corpus "$tmp/none" --iterations 0
expect 2 "--alpha: 0 must be > 0" -- "$parasol" lda --corpus "$tmp/none" --alpha 0
expect 2 "--rank: 'x' is not a finite number" -- "$parasol" mf --rank x
expect 2 "--metrics $tmp/no/such/m.csv: no folder $tmp/no/such" -- "$parasol" train --model mlp --metrics "$tmp/no/such/m.csv"
touch "$tmp/afile"
expect 2 "--checkpoint $tmp/afile: exists and is not a folder" -- "$parasol" mf --data synthetic --checkpoint "$tmp/afile"
expect 2 "unknown command 'trian'" -- "$parasol" trian
expect 2 "a command is required" -- "$parasol"
if "$parasol" --version | grep -Eq '^parasol [0-9]+\.[0-9]+\.[0-9]+$'; then echo "ok: --version"; else
  echo "FAIL: --version"; failures=$((failures + 1)); fi
# Under mpirun one rank reports a usage error.
"$mpirun" -np 2 "$parasol" train --lr nan > /dev/null 2> "$tmp/err"
if [ "$(grep -c "'nan' is not a finite number" "$tmp/err")" -eq 1 ] && ! grep -q MPI_ABORT "$tmp/err"; then
  echo "ok: one usage error under mpirun"
else
  echo "FAIL: usage error under mpirun:"; cat "$tmp/err"; failures=$((failures + 1))
fi

# Metrics are written row by row: a run can be watched, and a killed run keeps complete rows.
for d in $(seq 200); do echo "apple banana cherry date elder fig grape $d apple fig"; done > "$tmp/docs.txt"
"$parasol" lda --corpus "$tmp/docs.txt" --format lines --topics 4 --iterations 100000 --metrics "$tmp/live.csv" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 300); do [ "$(wc -l < "$tmp/live.csv" 2>/dev/null || echo 0)" -ge 3 ] && break; sleep 0.1; done
kill -9 "$pid"; wait "$pid" 2>/dev/null
if [ "$(head -1 "$tmp/live.csv")" = "iteration,seconds,tokens_per_sec,loglik_per_token,umass,npmi" ] &&
   [ "$(wc -l < "$tmp/live.csv")" -ge 3 ] &&
   awk -F, 'NR > 1 && NF != 6 { bad = 1 } END { exit bad }' "$tmp/live.csv"; then
  echo "ok: metrics rows of a killed run"
else
  echo "FAIL: metrics of a killed run:"; cat "$tmp/live.csv"; failures=$((failures + 1))
fi

finish
