// The table of live C handles (capi.hpp, TokenTable).
#include "capi/capi.hpp"

namespace devmesh::capi {

HandleTable& live_handles() {
  static HandleTable* table = new HandleTable;  // never destroyed, see capi.hpp
  return *table;
}

}  // namespace devmesh::capi
