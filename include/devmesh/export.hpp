// Symbol visibility: the library is built with hidden visibility and exports
// exactly what carries DEVMESH_API.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define DEVMESH_API __attribute__((visibility("default")))
#else
#define DEVMESH_API
#endif
