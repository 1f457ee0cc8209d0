#include "mpi_check.hpp"

namespace devmesh::detail {

void throw_mpi_error(int code, const char* call) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  int cls = code;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) len = 0;
  if (MPI_Error_class(code, &cls) != MPI_SUCCESS) cls = code;
  std::string what(call);
  what = what.substr(0, what.find('('));
  throw Error(Status::backend, what + " failed: " + std::string(text, static_cast<std::size_t>(len)) +
                                   " (MPI error class " + std::to_string(cls) + ")");
}

void return_errors(MPI_Comm& comm) {
  if (comm == MPI_COMM_NULL) return;
  if (const int e = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN); e != MPI_SUCCESS) {
    MPI_Comm_free(&comm);
    throw_mpi_error(e, "MPI_Comm_set_errhandler");
  }
}

}  // namespace devmesh::detail
