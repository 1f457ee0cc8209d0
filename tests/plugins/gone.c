/* A library that plugins link against under a soname no file has
 * (libdevmesh_test_absent.so), as a plugin whose dependency is missing on
 * this machine (libnccl.so.2 on a CPU node). */
int devmesh_test_gone(void) { return 1; }
