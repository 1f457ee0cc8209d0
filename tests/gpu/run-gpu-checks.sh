#!/usr/bin/env bash
# Builds and runs every NCCL check on a GPU machine, in one command:
#   bash tests/gpu/run-gpu-checks.sh [OUT_DIR]
# Needs: CUDA (nvcc not required, the runtime and headers are), NCCL (system
# or PyTorch's nvidia-nccl wheel), g++, and MPICH as .deb files in .gpu-debs/
# (tests/gpu/fetch-mpich-debs.sh makes them on a Debian build machine).
# Writes OUT_DIR/GPU-RESULTS.md (default: docs/).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-docs}
mkdir -p "$out"
scratch=$(mktemp -d)
log="$out/gpu-run.log"
: >"$log"

# MPICH from the carried .deb files, unpacked into a scratch prefix.
mpi="$scratch/mpich"
for deb in .gpu-debs/*.deb; do dpkg -x "$deb" "$mpi"; done
export PATH="$mpi/usr/bin:$PATH"
export LD_LIBRARY_PATH="$mpi/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export HYDRA_LAUNCHER=fork MPIR_CVAR_NOLOCAL=1

# CUDA and NCCL: /usr/local/cuda, else PyTorch's wheels.
cuda=${CUDA_HOME:-/usr/local/cuda}
nccl_inc="" nccl_lib=""
for d in "$cuda" /usr $(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null); do
  if [ -f "$d/include/nccl.h" ] && ls "$d"/lib*/libnccl.so* >/dev/null 2>&1; then
    nccl_inc="$d/include"; nccl_lib=$(dirname "$(ls "$d"/lib*/libnccl.so* | head -1)"); break
  fi
done
cudart_inc="$cuda/include" cudart_lib="$cuda/lib64"
if [ ! -f "$cudart_inc/cuda_runtime.h" ]; then
  d=$(python3 -c 'import nvidia.cuda_runtime, os; print(os.path.dirname(nvidia.cuda_runtime.__file__))' 2>/dev/null)
  cudart_inc="$d/include" cudart_lib="$d/lib"
fi
[ -e "$nccl_lib/libnccl.so" ] || ln -sf "$(ls "$nccl_lib"/libnccl.so.* | head -1)" "$scratch/libnccl.so"
[ -e "$cudart_lib/libcudart.so" ] || ln -sf "$(ls "$cudart_lib"/libcudart.so.* | head -1)" "$scratch/libcudart.so"
export LD_LIBRARY_PATH="$nccl_lib:$cudart_lib:$LD_LIBRARY_PATH"

# The library's sources compiled straight into the check (no meson/Boost needed there).
srcs="lib/model/*.cpp lib/runtime/*.cpp backends/mpi/mpi_backend.cpp backends/nccl/device.cpp backends/nccl/nccl_backend.cpp"
{
  echo "== build"
  g++ -std=c++20 -O2 -DDEVMESH_HAVE_NCCL=1 -Iinclude -Ilib -Ibackends \
    -I"$mpi/usr/include/x86_64-linux-gnu/mpich" -I"$nccl_inc" -I"$cudart_inc" \
    $srcs tests/gpu/test_nccl_gpu.cpp -o "$scratch/test_nccl_gpu" \
    -L"$mpi/usr/lib/x86_64-linux-gnu" -L"$nccl_lib" -L"$cudart_lib" -L"$scratch" -lmpich -lnccl -lcudart -ldl
  echo "== 1 rank"
  timeout 300 mpiexec -n 1 "$scratch/test_nccl_gpu"
  echo "exit $?"
  echo "== 2 ranks on one GPU"
  timeout 120 mpiexec -n 2 "$scratch/test_nccl_gpu" --pair
  echo "exit $?"
} >>"$log" 2>&1

{
  echo "# NCCL backend on a GPU"
  echo
  echo "Run by \`tests/gpu/run-gpu-checks.sh\` on $(date -u +%Y-%m-%d)."
  echo
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
  echo
  echo '```'
  grep -E "^(RESULT|FAIL|GPU CHECKS|exit|==)" "$log"
  echo '```'
} >"$out/GPU-RESULTS.md"
cat "$out/GPU-RESULTS.md"
grep -q "GPU CHECKS FAILED\|^FAIL" "$log" && exit 1
exit 0
