#!/usr/bin/env bash
# Runs every NCCL check on a GPU machine, in one command:
#   bash tests/gpu/run-gpu-checks.sh [OUT_DIR]
# The programs come built from the build machine in .gpu/LEG/, one folder per
# build (tests/gpu/pack.sh), each with its MPI (Debian's MPICH, or a wheel's
# MPICH or Open MPI; Open MPI 5's ULFM adds the fault-tolerant check) and
# every library it needs but CUDA's and NCCL's, which this machine brings
# (/usr/local/cuda, else PyTorch's nvidia-* wheels). Needs no compiler, MPI
# or network here. Runs every leg, then writes OUT_DIR/GPU-RESULTS.md (one
# section per leg) and OUT_DIR/gpu-run.log (default OUT_DIR: docs/); fails
# if any check of any leg failed.
#   DEVMESH_GPU_ROUND=NAME   the section written: "## Round NAME" (default three)
#   DEVMESH_GPU_STEPS=v4     only the version 4 checks and what they rest on
#                            (the 1-rank collectives, nccl-cpu at 1 rank):
#                            under a minute a leg; default all (every step)
# The version 4 checks run at 1 rank, and at 2 ranks where the machine has
# two GPUs (NCCL takes one GPU per rank).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-docs}
round=${DEVMESH_GPU_ROUND:-three}
steps=${DEVMESH_GPU_STEPS:-all}
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
# Legs that travelled compressed (docs/NCCL.md, "Checks on a GPU").
if ! ls .gpu/*/bin/test_nccl_gpu >/dev/null 2>&1 && ls .gpu-carry/*.tar.xz >/dev/null 2>&1; then
  mkdir -p .gpu
  for t in .gpu-carry/*.tar.xz; do tar -C .gpu -xJf "$t"; done
fi
legs=()
for d in .gpu/*/; do [ -x "$d/bin/test_nccl_gpu" ] && legs+=("$PWD/${d%/}"); done
[ ${#legs[@]} -gt 0 ] || { echo "no .gpu/LEG/: run tests/gpu/pack.sh on the build machine first" >&2; exit 1; }
mkdir -p "$out"
log="$out/gpu-run.log"
: >"$log"

# This machine's NCCL and CUDA runtime, found by file.
wheels=$(python3 -c 'import nvidia; print(" ".join(nvidia.__path__))' 2>/dev/null)
first() { find -H "${@:2}" -name "$1" 2>/dev/null | head -1; }
nccl=$(first 'libnccl.so.2' "${CUDA_HOME:-/usr/local/cuda}/lib64" $wheels /usr/lib/x86_64-linux-gnu)
cudart=$(first 'libcudart.so.13' "${CUDA_HOME:-/usr/local/cuda}/lib64" $wheels /usr/lib/x86_64-linux-gnu)
gpu_libs="$(dirname "${nccl:-/x}"):$(dirname "${cudart:-/x}")"
base_path=$PATH base_ld=${LD_LIBRARY_PATH:-}

step() {  # step NAME SECONDS COMMAND...: one check, its exit status in the log
  local name=$1 limit=$2
  shift 2
  echo "== $name"
  timeout -s KILL "$limit" "$@"
  echo "exit $? ($name)"
}

run_leg() {  # run_leg DIR: every check with the programs and MPI in DIR
  local g=$1 launch ulfm=''
  export LD_LIBRARY_PATH="$g/mpi/lib:$g/lib:$gpu_libs${base_ld:+:$base_ld}"
  export PATH="$g/mpi/bin:$g/bin:$base_path" DEVMESH_BACKEND_PATH="$g/lib" HYDRA_LAUNCHER=fork MPIR_CVAR_NOLOCAL=1
  # The launcher: Open MPI's mpirun, else MPICH's hydra (the wheel's or Debian's).
  if [ -x "$g/mpi/bin/ompi_info" ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    launch=("$g/mpi/bin/mpirun" --oversubscribe)
    ulfm=1
  elif [ -x "$g/mpi/bin/mpiexec" ]; then
    launch=("$g/mpi/bin/mpiexec")
  else
    launch=("$g/bin/mpiexec")
  fi
  # test_nccl_cpu reads the plugin's table at the path it was built with.
  local plugin
  plugin=$(cat "$g/plugin-path")
  [ -e "$plugin" ] || { mkdir -p "$(dirname "$plugin")" && ln -sfn "$g/lib/libdevmesh-backend-nccl.so" "$plugin"; }
  echo "== MPI: $(cat "$g/mpi-name") (${launch[0]})"
  step "1 rank: collectives, point to point, creation paths, hybrid mesh, bandwidth" 200 \
    "${launch[@]}" -n 1 "$g/bin/test_nccl_gpu"
  step "1 rank: version 4 (v-collectives, rooted, started forms, wait_all, batch, alltoallv cost)" 150 \
    "${launch[@]}" -n 1 "$g/bin/test_nccl_gpu" --v4
  if [ "${gpus:-0}" -ge 2 ]; then
    step "2 ranks on 2 GPUs: version 4" 150 "${launch[@]}" -n 2 "$g/bin/test_nccl_gpu" --v4
  else
    echo "== 2 ranks: version 4 not run (${gpus:-0} GPU(s); NCCL takes one GPU per rank)"
  fi
  if [ "$steps" = v4 ]; then
    step "nccl-cpu at 1 rank with a GPU: per-dim override, options, revoke (version 4 members too)" 90 \
      "${launch[@]}" -n 1 "$g/bin/test_nccl_cpu" --color_output=no --log_level=test_suite
    return
  fi
  step "1 rank: cost per call, devmesh against raw NCCL on the same communicator, 8 B to 256 MiB" 240 \
    "${launch[@]}" -n 1 "$g/bin/test_nccl_gpu" --cost
  step "2 ranks on one GPU: same-GPU error" 60 \
    "${launch[@]}" -n 2 "$g/bin/test_nccl_gpu" --pair
  for n in 1 2; do
    step "nccl-cpu at $n rank(s) with a GPU: per-dim override, options, revoke" 90 \
      "${launch[@]}" -n $n "$g/bin/test_nccl_cpu" --color_output=no --log_level=test_suite
  done
  if [ -n "$ulfm" ]; then
    step "fault-tolerant mesh with an NCCL dim: a rank killed, the watcher revokes NCCL, shrink" 60 \
      "${launch[@]}" --with-ft ulfm -n 2 "$g/bin/test_nccl_gpu" --ft
  fi
}

{
  echo "== libraries: nccl ${nccl:-none}, cudart ${cudart:-none}"
  for g in "${legs[@]}"; do
    echo "==== leg $(basename "$g")"
    (run_leg "$g")
  done
} >>"$log" 2>&1

# This run's section: the machine, then each leg's results as printed.
section=$(mktemp)
{
  echo "## Round $round ($(date -u +%Y-%m-%d))"
  echo
  echo "Run by \`tests/gpu/run-gpu-checks.sh\`, one subsection per build the checks came from (\`tests/gpu/pack.sh\`)."
  echo
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
  echo
  echo "Versions: $(grep -m1 '^RESULT device' "$log" | sed 's/^RESULT device //')"
  echo
  echo "$(sed -n 1p "$log")"
  echo
  echo "Steps: $steps (DEVMESH_GPU_STEPS). GPUs: ${gpus:-0}, so version 4 ran at 1 rank$([ "${gpus:-0}" -ge 2 ] &&
       echo ' and 2 ranks'). Not in the library yet, so not run: counts in GPU memory, repair of a mesh."
  for g in "${legs[@]}"; do
    echo
    echo "### $(cat "$g/mpi-name") (build \`$(basename "$g")\`)"
    echo
    echo '```'
    awk -v leg="==== leg $(basename "$g")" '$0 == leg {on=1; next} /^==== leg / {on=0} on' "$log" |
      grep -E "^(RESULT|FAIL|GPU CHECKS|exit|==)|error:|Leaving test case|\*\*\* No errors|failure"
    echo '```'
  done
} >"$section"
# Into GPU-RESULTS.md: the file's text up to this round's heading, the
# section, then whatever followed the old section (the next "## " heading on).
doc="$out/GPU-RESULTS.md"
[ -f "$doc" ] || printf '# NCCL backend on a GPU\n' >"$doc"
awk -v head="## Round $round " -v section="$section" '
  index($0, head) == 1 { while ((getline line < section) > 0) print line; skip = 1; done = 1; next }
  skip && /^## / { skip = 0; print "" }
  !skip { print }
  END { if (!done) { print ""; while ((getline line < section) > 0) print line } }' "$doc" >"$doc.new"
mv "$doc.new" "$doc"
rm -f "$section"
cat "$doc"
grep -qE "^exit [1-9]" "$log" && exit 1
exit 0
