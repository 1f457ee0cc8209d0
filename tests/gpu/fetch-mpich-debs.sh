#!/usr/bin/env bash
# On a build machine (Debian 12): downloads MPICH and the libraries it needs
# as .deb files into .gpu-debs/ (git-ignored), for run-gpu-checks.sh to
# unpack on a GPU machine that has no MPI and no network.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .gpu-debs
cd .gpu-debs
apt-get download mpich libmpich12 libmpich-dev libucx0 libhwloc15 libslurm38 libibverbs1 \
  librdmacm1 libnl-3-200 libnl-route-3-200 libnuma1 libgfortran5 libquadmath0 2>&1 | tail -1
ls -1 *.deb | wc -l
