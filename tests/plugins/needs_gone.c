/* Makes the missingdep plugin really need libdevmesh_test_absent.so. */
int devmesh_test_gone(void);
int devmesh_test_uses_gone(void) { return devmesh_test_gone(); }
