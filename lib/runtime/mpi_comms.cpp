#include "mpi_comms.hpp"

#include "hash.hpp"
#include "mpi_check.hpp"

namespace devmesh::detail::mpi {

namespace {

// MPI_Comm_create_group takes a number: the tag's hash, within the
// smallest MPI_TAG_UB the standard allows.
MPI_Comm comm_from_comm(MPI_Group group, const std::string& tag, MPI_Comm over) {
  Hash h;
  h.add(tag);
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_create_group(over, group, static_cast<int>(h.h % 32000u), &comm), "MPI_Comm_create_group");
  return_errors(comm);
  return comm;
}

}  // namespace

#if DEVMESH_HAVE_MPI_COMM_CREATE_FROM_GROUP

MPI_Comm comm_from_session_group(MPI_Group group, const std::string& tag) {
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_create_from_group(group, tag.c_str(), MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm),
            "MPI_Comm_create_from_group");
  return comm;
}

#else

MPI_Comm comm_from_session_group(MPI_Group, const std::string&) {
  throw Error(Status::unsupported,
              "a mesh from an MPI_Group needs MPI_Comm_create_from_group (MPI 4), which this "
              "MPI (" +
                  version_text() + ") lacks");
}

#endif

namespace {

template <class Make>
MPI_Comm with_group(MPI_Group root_group, std::span<const int> members, Make&& make) {
  MPI_Group group = MPI_GROUP_NULL;
  DEVMESH_MPI(MPI_Group_incl(root_group, static_cast<int>(members.size()), members.data(), &group));
  try {
    MPI_Comm comm = make(group);
    MPI_Group_free(&group);
    return comm;
  } catch (...) {
    MPI_Group_free(&group);
    throw;
  }
}

}  // namespace

MPI_Comm comm_from_members(MPI_Group root_group, std::span<const int> members, const std::string& tag, MPI_Comm over) {
  return with_group(root_group, members, [&](MPI_Group group) {
    return dims_from_group ? comm_from_session_group(group, tag) : comm_from_comm(group, tag, over);
  });
}

MPI_Comm comm_create_over(MPI_Group root_group, std::span<const int> members, MPI_Comm over) {
  return with_group(root_group, members, [&](MPI_Group group) {
    MPI_Comm comm = MPI_COMM_NULL;
    DEVMESH_MPI(MPI_Comm_create(over, group, &comm));
    return comm;
  });
}

}  // namespace devmesh::detail::mpi
