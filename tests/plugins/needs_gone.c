/* A reference to libdevmesh_test_gone's symbol: without one, the linker's
 * --as-needed drops the dependency and the plugin loads fine. */
int devmesh_test_gone(void);
int (*const devmesh_test_needs_gone)(void) = devmesh_test_gone;
