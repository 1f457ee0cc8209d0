# Sourced by the memory checkers (tests/sanitize/run-sanitized.sh,
# tests/valgrind/run-valgrind.sh): the environment that keeps third-party
# noise out of their reports without excusing any of devmesh's own.
#
# hwloc's PCI plugin (hwloc_pci.so, from libhwloc-plugins, which Debian
# installs beside Open MPI's libpmix2) allocates at MPI_Init and is then
# dlclose'd: its leak (1016 bytes in 9 blocks, every rank) is reported from
# an "<unknown module>", which no suppression can name. MPI does not need PCI
# discovery to place ranks on one machine, so the plugin is left out.
export HWLOC_COMPONENTS=-pci
