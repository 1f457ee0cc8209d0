/* An empty shared object: not a devmesh backend plugin. */
typedef int devmesh_test_empty_translation_unit;
