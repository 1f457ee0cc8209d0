#!/usr/bin/env bash
# Runs every NCCL check on a GPU machine, in one command:
#   bash tests/gpu/run-gpu-checks.sh [OUT_DIR]
# The programs come built from the build machine in .gpu/ (tests/gpu/pack.sh),
# with their MPI (Debian's MPICH, or Open MPI 5 from its wheel, which adds
# the fault-tolerant check) and every library they need but CUDA's and
# NCCL's, which this
# machine brings (/usr/local/cuda, else PyTorch's nvidia-* wheels). Needs no
# compiler, MPI or network here. Writes OUT_DIR/GPU-RESULTS.md and
# OUT_DIR/gpu-run.log (default OUT_DIR: docs/).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-docs}
g=$PWD/.gpu
[ -x "$g/bin/test_nccl_gpu" ] || { echo "no .gpu/: run tests/gpu/pack.sh on the build machine first" >&2; exit 1; }
mkdir -p "$out"
log="$out/gpu-run.log"
: >"$log"

# This machine's NCCL and CUDA runtime, found by file.
wheels=$(python3 -c 'import nvidia; print(" ".join(nvidia.__path__))' 2>/dev/null)
first() { find -H "${@:2}" -name "$1" 2>/dev/null | head -1; }
nccl=$(first 'libnccl.so.2' "${CUDA_HOME:-/usr/local/cuda}/lib64" $wheels /usr/lib/x86_64-linux-gnu)
cudart=$(first 'libcudart.so.13' "${CUDA_HOME:-/usr/local/cuda}/lib64" $wheels /usr/lib/x86_64-linux-gnu)
export LD_LIBRARY_PATH="$g/mpi/lib:$g/lib:$(dirname "${nccl:-/x}"):$(dirname "${cudart:-/x}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$g/bin:$PATH" DEVMESH_BACKEND_PATH="$g/lib" HYDRA_LAUNCHER=fork MPIR_CVAR_NOLOCAL=1
# The launcher: Open MPI's mpirun where it came along, else MPICH's hydra.
if [ -x "$g/mpi/bin/mpirun" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  launch=("$g/mpi/bin/mpirun" --oversubscribe)
else
  launch=(mpiexec)
fi
# test_nccl_cpu reads the plugin's table at the path it was built with.
plugin=$(cat "$g/plugin-path")
[ -e "$plugin" ] || { mkdir -p "$(dirname "$plugin")" && ln -s "$g/lib/libdevmesh-backend-nccl.so" "$plugin"; }

step() {  # step NAME SECONDS COMMAND...: one check, its exit status in the log
  local name=$1 limit=$2
  shift 2
  echo "== $name"
  timeout -s KILL "$limit" "$@"
  echo "exit $? ($name)"
}
{
  echo "== libraries: nccl ${nccl:-none}, cudart ${cudart:-none}"
  echo "== MPI: ${launch[0]}"
  step "1 rank: collectives, point to point, creation paths, hybrid mesh, bandwidth" 200 \
    "${launch[@]}" -n 1 "$g/bin/test_nccl_gpu"
  step "2 ranks on one GPU: same-GPU error" 60 \
    "${launch[@]}" -n 2 "$g/bin/test_nccl_gpu" --pair
  for n in 1 2; do
    step "nccl-cpu at $n rank(s) with a GPU: per-dim override, options, revoke" 90 \
      "${launch[@]}" -n $n "$g/bin/test_nccl_cpu" --color_output=no --log_level=test_suite
  done
  if [ -x "$g/mpi/bin/mpirun" ]; then
    step "fault-tolerant mesh with an NCCL dim: a rank killed, the watcher revokes NCCL, shrink" 60 \
      "${launch[@]}" --with-ft ulfm -n 2 "$g/bin/test_nccl_gpu" --ft
  fi
} >>"$log" 2>&1

{
  echo "# NCCL backend on a GPU"
  echo
  echo "Run by \`tests/gpu/run-gpu-checks.sh\` on $(date -u +%Y-%m-%d) (programs built by \`tests/gpu/pack.sh\`)."
  echo
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
  echo
  echo '```'
  grep -E "^(RESULT|FAIL|GPU CHECKS|exit|==)|error:|Leaving test case|\*\*\* No errors|failure" "$log"
  echo '```'
} >"$out/GPU-RESULTS.md"
cat "$out/GPU-RESULTS.md"
grep -qE "^exit [1-9]" "$log" && exit 1
exit 0
