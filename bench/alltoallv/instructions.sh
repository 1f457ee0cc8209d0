#!/usr/bin/env bash
# bench/alltoallv/instructions.sh BUILD DATA: the instructions devmesh adds
# to a blocking alltoallv, counted by callgrind, which a shared machine's
# load cannot blur as it blurs times. Rank 0 of 8 runs under
# valgrind --tool=callgrind, collecting only inside devmesh's function
# (Communicator::alltoallv, then devmesh_alltoallv), for 8 B per peer;
# what devmesh adds is that count less the inclusive count of the MPI call
# it makes (MPI's own work, its polling included, cancels out). Two runs
# of N1 and N2 calls, so that the first call's one-time work cancels too:
# added = ((collected - mpi) at N2 - (collected - mpi) at N1) / (N2 - N1).
# One record per method into DATA/alltoallv_instructions.tsv
# (bench/report_vcoll.py); none when valgrind is missing. Called by
# bench/run-all (section vcoll).
set -euo pipefail
BUILD=${1:?usage: bench/alltoallv/instructions.sh BUILD DATA}
DATA=${2:?usage: bench/alltoallv/instructions.sh BUILD DATA}
mkdir -p "$DATA"
out=$DATA/alltoallv_instructions.tsv
rm -f "$out"
if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
  echo "instructions.sh: no valgrind: instruction counts left out" >&2
  exit 0
fi
exe=$(realpath "$BUILD/bench/alltoallv/bench_alltoallv")
n1=500 n2=2500 ranks=8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# rank.sh METHOD CALLS FUNCTION: rank 0 under callgrind (hydra's PMI_RANK,
# Open MPI's OMPI_COMM_WORLD_RANK), the others as they are.
cat > "$tmp/rank.sh" <<EOF
#!/usr/bin/env bash
rank=\${PMI_RANK:-\${OMPI_COMM_WORLD_RANK:-0}}
args=(--calls "\$2" --method "\$1" --bytes 8)
if [ "\$rank" = 0 ]; then
  exec valgrind --tool=callgrind --toggle-collect="\$3" --callgrind-out-file="$tmp/cg.\$1.\$2" "$exe" "\${args[@]}" \\
    2>/dev/null
fi
exec "$exe" "\${args[@]}"
EOF
# outside METHOD CALLS: instructions collected in devmesh's function less
# those inside the MPI call.
outside() {
  local annotated=$tmp/annotated.$1.$2 total mpi
  callgrind_annotate --inclusive=yes --auto=no "$tmp/cg.$1.$2" > "$annotated" 2>/dev/null
  total=$(awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}' "$annotated")
  mpi=$(grep -E '[?]{3}:P?MPI_Alltoallv(_c)? ' "$annotated" | head -1 | awk '{gsub(",", "", $1); print $1}')
  if [ -z "$total" ] || [ -z "$mpi" ]; then
    echo "instructions.sh: $1: no count of devmesh's function or of the MPI call in callgrind's output" >&2
    exit 1
  fi
  echo $((total - mpi))
}
for method in devmesh capi; do
  case $method in
    devmesh) fn='devmesh::detail::PluginCommunicator::alltoallv(*' ;;
    capi) fn='devmesh_alltoallv' ;;
  esac
  for calls in $n1 $n2; do
    timeout 600 bash "$BUILD/tests/support/mpirun-local" "$ranks" bash "$tmp/rank.sh" "$method" "$calls" "$fn" >/dev/null
  done
  a=$(outside "$method" $n1) b=$(outside "$method" $n2)
  printf 'alltoallv_instructions\tmethod=%s\tranks=%d\tbytes=8\tcalls=%d\tadded=%d\n' \
    "$method" "$ranks" $((n2 - n1)) $(((b - a) / (n2 - n1))) >> "$out"
done
