!> Fortran bindings of devmesh: an N-D mesh of MPI ranks (see devmesh.h).
!>
!> ISO_C_BINDING over the C API. Conventions:
!>   * Every subroutine takes `ierr` last and sets it to DEVMESH_SUCCESS or one
!>     of the DEVMESH_ERR_* values (the C API's). `ierr` is optional: when it
!>     is absent, a failure prints devmesh_last_error() and stops the program
!>     (error stop), like MPI's default error handler.
!>   * A failing call leaves its output arguments untouched, and
!>     devmesh_last_error() then starts with the name of the procedure
!>     called ("devmesh_comm: unknown dim 'zz' ...").
!>   * Communicators: each call taking or returning one has a specific
!>     procedure for type(MPI_Comm) (use mpi_f08) and one for an integer
!>     handle (use mpi), behind one generic name. Handles cross to C as
!>     MPI_Fint, which is a default integer with gfortran and MPICH.
!>   * Names are fixed-length strings; trailing blanks are ignored. A blank
!>     dim name means what a NULL name means in C: the only dim of a 1-D view
!>     (devmesh_size: the whole view; devmesh_flatten: the default name).
!>   * Rank, local rank and coordinate *values* are 0-based, as in MPI.
!>     Positions are 1-based as in any Fortran array: coord(i) is the
!>     coordinate along dim i, and devmesh_dim_name(mesh, i, ...) names it.
!>   * Output arrays (coord, ranks) must be at least as long as the result
!>     (ndim, size(dim)): size(array) is passed to C as the capacity, and a
!>     shorter one gives DEVMESH_ERR_INVALID_ARGUMENT naming both counts,
!>     the array untouched; extra entries are left untouched.
!>   * Positions in arrays of several groups are 1-based too: group g
!>     (1-based) of devmesh_all_groups is ranks((g-1)*n+1 : g*n), n the
!>     size of the dim; the rank values in it are 0-based.
!>   * Every C function of devmesh.h has a Fortran form here under its own
!>     name, but for the C functions that exist for this module only
!>     (devmesh_create_f, devmesh_create_ex_f, devmesh_create_hosts_f,
!>     devmesh_comm_f, devmesh_cart_comm_f), which the generic of the name
!>     without _f calls; tests/docs/check_fortran_parity.py keeps this true.
!>   * Collectiveness is as in C: devmesh_create* over the parent;
!>     devmesh_comm over the caller's group along dim the first time that
!>     layout is asked for; devmesh_create_comms and devmesh_cart_comm over
!>     all members of the root; everything else is not collective.
!>
!> The module is compiled by the compiler that built devmesh (module files are
!> compiler-specific); link with -ldevmesh_fortran -ldevmesh (pkg-config
!> devmesh-fortran, or CMake's devmesh::fortran).
module devmesh
  use, intrinsic :: iso_c_binding, only: c_int, c_char, c_ptr, c_null_ptr, c_null_char, &
                                         c_loc, c_associated, c_f_pointer, c_size_t, c_sizeof
  use, intrinsic :: iso_fortran_env, only: error_unit
  use mpi_f08, only: MPI_Comm, MPI_Group, MPI_COMM_NULL
  implicit none
  private

  integer, parameter, public :: DEVMESH_SUCCESS = 0
  integer, parameter, public :: DEVMESH_ERR_INVALID_ARGUMENT = 1
  integer, parameter, public :: DEVMESH_ERR_SHAPE_MISMATCH = 2
  integer, parameter, public :: DEVMESH_ERR_UNKNOWN_DIM = 3
  integer, parameter, public :: DEVMESH_ERR_DUPLICATE_NAME = 4
  integer, parameter, public :: DEVMESH_ERR_OVERLAP = 5
  integer, parameter, public :: DEVMESH_ERR_INCONSISTENT = 6
  integer, parameter, public :: DEVMESH_ERR_NOT_MEMBER = 7
  integer, parameter, public :: DEVMESH_ERR_BACKEND = 8
  integer, parameter, public :: DEVMESH_ERR_UNSUPPORTED = 9
  integer, parameter, public :: DEVMESH_ERR_INTERNAL = 10

  integer, parameter, public :: DEVMESH_COMM_PATH_AUTOMATIC = 0
  integer, parameter, public :: DEVMESH_COMM_PATH_CREATE_GROUP = 1
  integer, parameter, public :: DEVMESH_COMM_PATH_SPLIT = 2
  integer, parameter, public :: DEVMESH_COMM_PATH_CART_SUB = 3

  ! Data types and reductions of the collectives (devmesh.h's values).
  integer, parameter, public :: DEVMESH_INT8 = 0, DEVMESH_UINT8 = 1, DEVMESH_INT32 = 2, &
                                DEVMESH_UINT32 = 3, DEVMESH_INT64 = 4, DEVMESH_UINT64 = 5, &
                                DEVMESH_FLOAT16 = 6, DEVMESH_BFLOAT16 = 7, DEVMESH_FLOAT32 = 8, &
                                DEVMESH_FLOAT64 = 9
  integer, parameter, public :: DEVMESH_SUM = 0, DEVMESH_PROD = 1, DEVMESH_MIN = 2, DEVMESH_MAX = 3

  ! The error handler of the communicators devmesh_comm and devmesh_cart_comm
  ! return (devmesh_create_ex's comm_errors=; devmesh.h's values).
  integer, parameter, public :: DEVMESH_COMM_ERRORS_INHERIT = 0, DEVMESH_COMM_ERRORS_RETURN = 1

  !> A handle to one view of a mesh; the null handle (ptr = c_null_ptr) is
  !> "no mesh", what ranks outside a rank list get. `ptr` is the C API's
  !> devmesh_t, for mixing with C code.
  type, public :: devmesh_t
    type(c_ptr) :: ptr = c_null_ptr
  end type devmesh_t

  public :: devmesh_create, devmesh_create_from_ranks, devmesh_destroy
  public :: devmesh_create_ex
  public :: devmesh_slice, devmesh_flatten, devmesh_unflatten, devmesh_root
  public :: devmesh_concatenate
  public :: devmesh_ndim, devmesh_size, devmesh_dim_name, devmesh_local_rank
  public :: devmesh_coordinate, devmesh_group_ranks, devmesh_comm_count
  public :: devmesh_comm, devmesh_cart_comm, devmesh_create_comms
  public :: devmesh_associated, devmesh_last_error, devmesh_status_string
  public :: devmesh_allreduce, devmesh_allgather, devmesh_reduce_scatter, devmesh_broadcast
  public :: devmesh_alltoall, devmesh_barrier, devmesh_send, devmesh_recv
  public :: devmesh_shape, devmesh_all_groups, devmesh_root_size, devmesh_parent_rank
  public :: devmesh_create_hosts, devmesh_dim_within_hosts, devmesh_version
  public :: devmesh_dim_backend, devmesh_backend_comm

  !> A pending devmesh_isend/devmesh_irecv; the null request (ptr =
  !> c_null_ptr, DEVMESH_REQUEST_NULL in C) is complete. `ptr` is the C
  !> API's devmesh_request_t.
  type, public :: devmesh_request_t
    type(c_ptr) :: ptr = c_null_ptr
  end type devmesh_request_t

  public :: devmesh_isend, devmesh_irecv, devmesh_wait, devmesh_test, devmesh_waitall
  public :: devmesh_sendrecv

  public :: devmesh_create_from_comms, devmesh_create_from_group

  !> devmesh_create(comm, shape, names, mesh [, ierr])
  !> A root mesh of the given shape over all ranks of comm (a 0 in shape is
  !> chosen as MPI_Dims_create does). Collective over comm. On error, every
  !> rank gets the same ierr (DEVMESH_ERR_INCONSISTENT where ranks passed
  !> different arguments).
  interface devmesh_create
    module procedure create_f08, create_int
  end interface devmesh_create

  !> devmesh_create_from_ranks(comm, shape, ranks, names, mesh [, ierr])
  !> As devmesh_create over the listed ranks of comm (0-based; root index
  !> x is rank ranks(x+1)); zeros in shape are chosen from size(ranks).
  !> Ranks not listed get the null handle and DEVMESH_SUCCESS. Collective
  !> over comm. The same as devmesh_create_ex with ranks=.
  interface devmesh_create_from_ranks
    module procedure create_from_ranks_f08, create_from_ranks_int
  end interface devmesh_create_from_ranks

  !> devmesh_create_ex(comm, shape, names, mesh [, ierr] [, backend=]
  !>                   [, dim_backends=] [, backend_options=] [, dim_options=]
  !>                   [, ranks=] [, host_aware=] [, comm_errors=])
  !> devmesh_create with the options of the C devmesh_config_t (see
  !> devmesh.h); absent or blank: the library's default.
  !> backend: backend of every dim without an override ("mpi");
  !> dim_backends: "dim=backend[,...]", e.g. "tp=nccl"; backend_options:
  !> "key=value[,...]"; dim_options: "dim:key=value[,...][;dim:...]";
  !> ranks: a rank list as for devmesh_create_from_ranks (0-based; ranks not
  !> listed get the null handle; gfortran passes a zero-size constant such
  !> as [integer ::] as absent, so an empty list is refused only through
  !> devmesh_create_from_ranks); host_aware: .true. orders all ranks of
  !> comm by host, so that the innermost dims stay within hosts (not with
  !> ranks=: DEVMESH_ERR_INVALID_ARGUMENT); comm_errors: the error handler
  !> of the communicators devmesh_comm and devmesh_cart_comm return,
  !> DEVMESH_COMM_ERRORS_INHERIT (the parent's) or DEVMESH_COMM_ERRORS_RETURN
  !> (MPI_ERRORS_RETURN); another value gives DEVMESH_ERR_INVALID_ARGUMENT.
  !> A backend name that is no backend gives DEVMESH_ERR_INVALID_ARGUMENT, a
  !> backend that is found but cannot be used here DEVMESH_ERR_UNSUPPORTED,
  !> on every rank, mesh untouched. Collective over comm.
  interface devmesh_create_ex
    module procedure create_ex_f08, create_ex_int
  end interface devmesh_create_ex

  !> devmesh_create_from_comms(parent, comms, names, mesh [, ierr] [, backend=]
  !>                           [, dim_backends=] [, backend_options=] [, dim_options=])
  !> A mesh whose dims are communicators the program already has (see
  !> devmesh_create_from_comms in devmesh.h): comms(i) is the caller's
  !> communicator of dim names(i), its rank there the caller's coordinate.
  !> Ranks of parent that are no members pass MPI_COMM_NULL for every dim
  !> and get the null handle. devmesh_comm of a root dim returns the very
  !> communicator given; devmesh never frees it. Comms that do not form
  !> the mesh: DEVMESH_ERR_INVALID_ARGUMENT on every rank, mesh untouched.
  !> Collective over parent.
  interface devmesh_create_from_comms
    module procedure create_from_comms_f08, create_from_comms_int
  end interface devmesh_create_from_comms

  !> devmesh_create_from_group(group, tag, shape, names, mesh [, ierr]
  !>                           [, backend=] [, dim_backends=] [, backend_options=]
  !>                           [, dim_options=] [, host_aware=])
  !> MPI Sessions: a mesh over the members of group without a parent
  !> communicator (MPI_Init not needed; destroy the mesh before
  !> MPI_Session_finalize). Every member passes the same tag. With an MPI
  !> older than 4: DEVMESH_ERR_UNSUPPORTED. Collective over the group's
  !> members.
  interface devmesh_create_from_group
    module procedure create_from_group_f08, create_from_group_int
  end interface devmesh_create_from_group

  ! devmesh_config_t as bind(C): the field order and types of devmesh.h.
  type, bind(C) :: c_config
    integer(c_size_t) :: size
    integer(c_int) :: magic    ! unsigned int in C; the magic is below 2**31
    integer(c_int) :: version
    type(c_ptr) :: backend = c_null_ptr
    type(c_ptr) :: dim_backends = c_null_ptr
    type(c_ptr) :: backend_options = c_null_ptr
    type(c_ptr) :: dim_options = c_null_ptr
    integer(c_int) :: nranks
    type(c_ptr) :: ranks = c_null_ptr
    integer(c_int) :: host_aware
    integer(c_int) :: comm_errors
  end type c_config
  ! DEVMESH_CONFIG_MAGIC, DEVMESH_CONFIG_UNSET and DEVMESH_VERSION_CODE of
  ! devmesh.h.
  integer(c_int), parameter :: config_magic = 1685482851_c_int
  integer(c_int), parameter :: config_unset = ibset(0_c_int, 31)
  integer(c_int), parameter :: version_code = 300_c_int

  !> devmesh_comm(mesh, dim, comm [, ierr])
  !> The caller's communicator along dim, owned by devmesh (do not free it).
  !> Collective over the caller's group along dim the first time that
  !> layout is asked for on the root.
  interface devmesh_comm
    module procedure comm_f08, comm_int
  end interface devmesh_comm

  !> devmesh_cart_comm(mesh, comm [, ierr])
  !> The root as a Cartesian communicator (rank x is root index x), owned by
  !> devmesh. Collective over all members of the root the first time.
  interface devmesh_cart_comm
    module procedure cart_comm_f08, cart_comm_int
  end interface devmesh_cart_comm

  !> devmesh_create_hosts(comm, mesh [, ierr] [, host_dim=] [, local_dim=])
  !> The 2-D (host, local) mesh of comm: hosts from
  !> MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), or from DEVMESH_HOST_ID when
  !> every rank sets it; hosts ordered by their lowest rank in comm, ranks
  !> within a host by rank. host_dim, local_dim: the dim names (absent or
  !> blank: 'host' and 'local'). Collective over comm. Hosts with different
  !> numbers of ranks: DEVMESH_ERR_SHAPE_MISMATCH; DEVMESH_HOST_ID set on
  !> some ranks only: DEVMESH_ERR_INCONSISTENT; equal names:
  !> DEVMESH_ERR_DUPLICATE_NAME; on every rank, mesh untouched.
  interface devmesh_create_hosts
    module procedure create_hosts_f08, create_hosts_int
  end interface devmesh_create_hosts

  ! C strings built from Fortran names: one buffer, pointers into it.
  type :: c_strings
    character(kind=c_char), allocatable :: buf(:)
    type(c_ptr), allocatable :: ptr(:)
  end type c_strings

  ! The message of the last failure of a call through this module, naming
  ! the Fortran procedure; devmesh_last_error() returns it while
  ! `local_pending` (a failure found before calling C, or a C failure
  ! renamed by finish).
  character(len=:), allocatable, save :: local_message
  logical, save :: local_pending = .false.
  !$omp threadprivate(local_message, local_pending)

  interface
    integer(c_int) function c_create_f(parent, ndim, shape, names, mesh) &
        bind(C, name='devmesh_create_f')
      import :: c_int, c_ptr
      integer(c_int), value :: parent, ndim
      integer(c_int), intent(in) :: shape(*)
      type(c_ptr), intent(in) :: names(*)
      type(c_ptr), intent(inout) :: mesh
    end function c_create_f

    integer(c_int) function c_create_ex_f(parent, ndim, shape, names, config, mesh) &
        bind(C, name='devmesh_create_ex_f')
      import :: c_int, c_ptr, c_config
      integer(c_int), value :: parent, ndim
      integer(c_int), intent(in) :: shape(*)
      type(c_ptr), intent(in) :: names(*)
      type(c_config), intent(in) :: config
      type(c_ptr), intent(inout) :: mesh
    end function c_create_ex_f

    integer(c_int) function c_destroy(mesh) bind(C, name='devmesh_destroy')
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: mesh
    end function c_destroy

    integer(c_int) function c_slice(m, n, dims, out) bind(C, name='devmesh_slice')
      import :: c_int, c_ptr
      type(c_ptr), value :: m
      integer(c_int), value :: n
      type(c_ptr), intent(in) :: dims(*)
      type(c_ptr), intent(inout) :: out
    end function c_slice

    integer(c_int) function c_concatenate(n, meshes, out) bind(C, name='devmesh_concatenate')
      import :: c_int, c_ptr
      integer(c_int), value :: n
      type(c_ptr), intent(in) :: meshes(*)
      type(c_ptr), intent(inout) :: out
    end function c_concatenate

    integer(c_int) function c_flatten(m, name, out) bind(C, name='devmesh_flatten')
      import :: c_int, c_ptr
      type(c_ptr), value :: m, name
      type(c_ptr), intent(inout) :: out
    end function c_flatten

    integer(c_int) function c_unflatten(m, dim, n, sizes, names, out) bind(C, name='devmesh_unflatten')
      import :: c_int, c_ptr
      type(c_ptr), value :: m, dim
      integer(c_int), value :: n
      integer(c_int), intent(in) :: sizes(*)
      type(c_ptr), intent(in) :: names(*)
      type(c_ptr), intent(inout) :: out
    end function c_unflatten

    integer(c_int) function c_root(m, out) bind(C, name='devmesh_root')
      import :: c_int, c_ptr
      type(c_ptr), value :: m
      type(c_ptr), intent(inout) :: out
    end function c_root

    integer(c_int) function c_ndim(m, ndim) bind(C, name='devmesh_ndim')
      import :: c_int, c_ptr
      type(c_ptr), value :: m
      integer(c_int), intent(inout) :: ndim
    end function c_ndim

    integer(c_int) function c_size(m, dim, size) bind(C, name='devmesh_size')
      import :: c_int, c_ptr
      type(c_ptr), value :: m, dim
      integer(c_int), intent(inout) :: size
    end function c_size

    integer(c_int) function c_dim_name(m, index, name) bind(C, name='devmesh_dim_name')
      import :: c_int, c_ptr
      type(c_ptr), value :: m
      integer(c_int), value :: index
      type(c_ptr), intent(inout) :: name
    end function c_dim_name

    integer(c_int) function c_local_rank(m, dim, rank) bind(C, name='devmesh_local_rank')
      import :: c_int, c_ptr
      type(c_ptr), value :: m, dim
      integer(c_int), intent(inout) :: rank
    end function c_local_rank

    integer(c_int) function c_coordinate(m, maxdims, coord) bind(C, name='devmesh_coordinate')
      import :: c_int, c_ptr
      type(c_ptr), value :: m
      integer(c_int), value :: maxdims
      integer(c_int), intent(inout) :: coord(*)
    end function c_coordinate

    integer(c_int) function c_group_ranks(m, dim, maxranks, ranks) bind(C, name='devmesh_group_ranks')
      import :: c_int, c_ptr
      type(c_ptr), value :: m, dim
      integer(c_int), value :: maxranks
      integer(c_int), intent(inout) :: ranks(*)
    end function c_group_ranks

    integer(c_int) function c_comm_count(m, count) bind(C, name='devmesh_comm_count')
      import :: c_int, c_ptr
      type(c_ptr), value :: m
      integer(c_int), intent(inout) :: count
    end function c_comm_count

    integer(c_int) function c_comm_f(m, dim, comm) bind(C, name='devmesh_comm_f')
      import :: c_int, c_ptr
      type(c_ptr), value :: m, dim
      integer(c_int), intent(inout) :: comm
    end function c_comm_f

    integer(c_int) function c_cart_comm_f(m, comm) bind(C, name='devmesh_cart_comm_f')
      import :: c_int, c_ptr
      type(c_ptr), value :: m
      integer(c_int), intent(inout) :: comm
    end function c_cart_comm_f

    integer(c_int) function c_create_comms(m, path) bind(C, name='devmesh_create_comms')
      import :: c_int, c_ptr
      type(c_ptr), value :: m
      integer(c_int), value :: path
    end function c_create_comms

    type(c_ptr) function c_status_string(status) bind(C, name='devmesh_status_string')
      import :: c_int, c_ptr
      integer(c_int), value :: status
    end function c_status_string

    type(c_ptr) function c_last_error() bind(C, name='devmesh_last_error')
      import :: c_ptr
    end function c_last_error

    integer(c_size_t) function c_strlen(s) bind(C, name='strlen')
      import :: c_size_t, c_ptr
      type(c_ptr), value :: s
    end function c_strlen

    integer(c_int) function c_allreduce(m, dim, send, recv, count, datatype, op, stream) &
        bind(C, name='devmesh_allreduce')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: m, dim, send, recv, stream
      integer(c_size_t), value :: count
      integer(c_int), value :: datatype, op
    end function c_allreduce

    integer(c_int) function c_allgather(m, dim, send, recv, count, datatype, stream) &
        bind(C, name='devmesh_allgather')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: m, dim, send, recv, stream
      integer(c_size_t), value :: count
      integer(c_int), value :: datatype
    end function c_allgather

    integer(c_int) function c_reduce_scatter(m, dim, send, recv, count, datatype, op, stream) &
        bind(C, name='devmesh_reduce_scatter')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: m, dim, send, recv, stream
      integer(c_size_t), value :: count
      integer(c_int), value :: datatype, op
    end function c_reduce_scatter

    integer(c_int) function c_broadcast(m, dim, buffer, count, datatype, root, stream) &
        bind(C, name='devmesh_broadcast')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: m, dim, buffer, stream
      integer(c_size_t), value :: count
      integer(c_int), value :: datatype, root
    end function c_broadcast

    integer(c_int) function c_alltoall(m, dim, send, recv, count, datatype, stream) &
        bind(C, name='devmesh_alltoall')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: m, dim, send, recv, stream
      integer(c_size_t), value :: count
      integer(c_int), value :: datatype
    end function c_alltoall

    integer(c_int) function c_barrier(m, dim, stream) bind(C, name='devmesh_barrier')
      import :: c_int, c_ptr
      type(c_ptr), value :: m, dim, stream
    end function c_barrier

    integer(c_int) function c_send(m, dim, buffer, count, datatype, peer, stream) &
        bind(C, name='devmesh_send')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: m, dim, buffer, stream
      integer(c_size_t), value :: count
      integer(c_int), value :: datatype, peer
    end function c_send

    integer(c_int) function c_recv(m, dim, buffer, count, datatype, peer, stream) &
        bind(C, name='devmesh_recv')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: m, dim, buffer, stream
      integer(c_size_t), value :: count
      integer(c_int), value :: datatype, peer
    end function c_recv

    integer(c_int) function c_shape(m, maxdims, shape) bind(C, name='devmesh_shape')
      import :: c_int, c_ptr
      type(c_ptr), value :: m
      integer(c_int), value :: maxdims
      integer(c_int), intent(inout) :: shape(*)
    end function c_shape

    integer(c_int) function c_all_groups(m, dim, maxranks, ranks) bind(C, name='devmesh_all_groups')
      import :: c_int, c_ptr
      type(c_ptr), value :: m, dim
      integer(c_int), value :: maxranks
      integer(c_int), intent(inout) :: ranks(*)
    end function c_all_groups

    integer(c_int) function c_root_size(m, size) bind(C, name='devmesh_root_size')
      import :: c_int, c_ptr
      type(c_ptr), value :: m
      integer(c_int), intent(inout) :: size
    end function c_root_size

    integer(c_int) function c_parent_rank(m, rank) bind(C, name='devmesh_parent_rank')
      import :: c_int, c_ptr
      type(c_ptr), value :: m
      integer(c_int), intent(inout) :: rank
    end function c_parent_rank

    integer(c_int) function c_create_hosts_f(parent, host_dim, local_dim, mesh) &
        bind(C, name='devmesh_create_hosts_f')
      import :: c_int, c_ptr
      integer(c_int), value :: parent
      type(c_ptr), value :: host_dim, local_dim
      type(c_ptr), intent(inout) :: mesh
    end function c_create_hosts_f

    integer(c_int) function c_dim_within_hosts(m, dim, within) bind(C, name='devmesh_dim_within_hosts')
      import :: c_int, c_ptr
      type(c_ptr), value :: m, dim
      integer(c_int), intent(inout) :: within
    end function c_dim_within_hosts

    integer(c_int) function c_version(major, minor, patch) bind(C, name='devmesh_version')
      import :: c_int
      integer(c_int), intent(inout) :: major, minor, patch
    end function c_version

    integer(c_int) function c_dim_backend(m, dim, backend) bind(C, name='devmesh_dim_backend')
      import :: c_int, c_ptr
      type(c_ptr), value :: m, dim
      type(c_ptr), intent(inout) :: backend
    end function c_dim_backend

    integer(c_int) function c_backend_comm(m, dim, backend, handle) bind(C, name='devmesh_backend_comm')
      import :: c_int, c_ptr
      type(c_ptr), value :: m, dim, backend
      type(c_ptr), intent(inout) :: handle
    end function c_backend_comm

    integer(c_int) function c_isend(m, dim, buffer, count, datatype, peer, stream, request) &
        bind(C, name='devmesh_isend')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: m, dim, buffer, stream
      integer(c_size_t), value :: count
      integer(c_int), value :: datatype, peer
      type(c_ptr), intent(inout) :: request
    end function c_isend

    integer(c_int) function c_irecv(m, dim, buffer, count, datatype, peer, stream, request) &
        bind(C, name='devmesh_irecv')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: m, dim, buffer, stream
      integer(c_size_t), value :: count
      integer(c_int), value :: datatype, peer
      type(c_ptr), intent(inout) :: request
    end function c_irecv

    integer(c_int) function c_wait(request) bind(C, name='devmesh_wait')
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: request
    end function c_wait

    integer(c_int) function c_test(request, done) bind(C, name='devmesh_test')
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: request
      integer(c_int), intent(out) :: done
    end function c_test

    integer(c_int) function c_waitall(n, requests) bind(C, name='devmesh_waitall')
      import :: c_int, c_ptr
      integer(c_int), value :: n
      type(c_ptr), intent(inout) :: requests(*)
    end function c_waitall

    integer(c_int) function c_sendrecv(m, dim, sendbuf, sendcount, sendtype, dest, recvbuf, recvcount, &
                                       recvtype, source, stream) bind(C, name='devmesh_sendrecv')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: m, dim, sendbuf, recvbuf, stream
      integer(c_size_t), value :: sendcount, recvcount
      integer(c_int), value :: sendtype, dest, recvtype, source
    end function c_sendrecv
  end interface

  ! ---- Cartesian views, neighbours, groups with their communicator ----------
  public :: devmesh_cart_comm_periodic, devmesh_neighbors, devmesh_all_groups_comm

  !> devmesh_cart_comm_periodic(mesh, periodic, comm [, ierr])
  !> mesh as a Cartesian communicator over the caller's group of the
  !> flattened view, dims in the view's order, dim i periodic when
  !> periodic(i) (one per dim; size 0: none), no reordering; owned by
  !> devmesh. Collective over that group the first time.
  interface devmesh_cart_comm_periodic
    module procedure cart_comm_periodic_f08, cart_comm_periodic_int
  end interface devmesh_cart_comm_periodic

  !> devmesh_all_groups_comm(mesh, dim, ranks, own, comm [, ierr])
  !> Every group of dim (as devmesh_all_groups: ranks holds at least W
  !> entries, groups in order of their smallest rank), own: the 0-based
  !> number of the caller's group (ranks(own*n+1:(own+1)*n), n = size of
  !> dim), comm: its communicator (devmesh_comm). Collective as devmesh_comm.
  interface devmesh_all_groups_comm
    module procedure all_groups_comm_f08, all_groups_comm_int
  end interface devmesh_all_groups_comm

  interface
    integer(c_int) function c_cart_comm_periodic_f(m, ndims, periodic, comm) &
        bind(C, name='devmesh_cart_comm_periodic_f')
      import :: c_int, c_ptr
      type(c_ptr), value :: m
      integer(c_int), value :: ndims
      integer(c_int), intent(in) :: periodic(*)
      integer(c_int), intent(inout) :: comm
    end function c_cart_comm_periodic_f

    integer(c_int) function c_neighbors(m, dim, periodic, distance, prev, next, parent_prev, parent_next) &
        bind(C, name='devmesh_neighbors')
      import :: c_int, c_ptr
      type(c_ptr), value :: m, dim
      integer(c_int), value :: periodic, distance
      integer(c_int), intent(inout) :: prev, next, parent_prev, parent_next
    end function c_neighbors

    integer(c_int) function c_all_groups_comm_f(m, dim, maxranks, ranks, own, comm) &
        bind(C, name='devmesh_all_groups_comm_f')
      import :: c_int, c_ptr
      type(c_ptr), value :: m, dim
      integer(c_int), value :: maxranks
      integer(c_int), intent(inout) :: ranks(*)
      integer(c_int), intent(inout) :: own, comm
    end function c_all_groups_comm_f

    integer(c_int) function c_create_from_comms_f(parent, ndim, comms, names, config, mesh) &
        bind(C, name='devmesh_create_from_comms_f')
      import :: c_int, c_ptr, c_config
      integer(c_int), value :: parent, ndim
      integer(c_int), intent(in) :: comms(*)
      type(c_ptr), intent(in) :: names(*)
      type(c_config), intent(in) :: config
      type(c_ptr), intent(inout) :: mesh
    end function c_create_from_comms_f

    integer(c_int) function c_create_from_group_f(group, tag, ndim, shape, names, config, mesh) &
        bind(C, name='devmesh_create_from_group_f')
      import :: c_int, c_ptr, c_config, c_char
      integer(c_int), value :: group, ndim
      character(kind=c_char), intent(in) :: tag(*)
      integer(c_int), intent(in) :: shape(*)
      type(c_ptr), intent(in) :: names(*)
      type(c_config), intent(in) :: config
      type(c_ptr), intent(inout) :: mesh
    end function c_create_from_group_f
  end interface

contains

  ! ---- helpers ---------------------------------------------------------------

  ! NUL-terminated copies of names(1:n) without trailing blanks; entries
  ! past size(names) are empty strings. cs must be a TARGET in the caller.
  subroutine to_c_strings(names, n, cs)
    character(len=*), intent(in) :: names(:)
    integer, intent(in) :: n
    type(c_strings), intent(inout), target :: cs
    integer :: i, j, total, at, l
    total = 0
    do i = 1, n
      if (i <= size(names)) total = total + len_trim(names(i))
      total = total + 1
    end do
    allocate(cs%buf(max(total, 1)), cs%ptr(n))
    at = 1
    do i = 1, n
      l = 0
      if (i <= size(names)) l = len_trim(names(i))
      do j = 1, l
        cs%buf(at + j - 1) = names(i)(j:j)
      end do
      cs%buf(at + l) = c_null_char
      cs%ptr(i) = c_loc(cs%buf(at))
      at = at + l + 1
    end do
  end subroutine to_c_strings

  ! A C string for one name, or c_null_ptr when it is blank.
  subroutine to_c_name(name, cs, p)
    character(len=*), intent(in) :: name
    type(c_strings), intent(inout), target :: cs
    type(c_ptr), intent(out) :: p
    if (len_trim(name) == 0) then
      p = c_null_ptr
    else
      call to_c_strings([name], 1, cs)
      p = cs%ptr(1)
    end if
  end subroutine to_c_name

  ! A copy of a NUL-terminated C string.
  function from_c_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function from_c_string

  ! Hands a status to the caller: into ierr, or, without ierr, a failure
  ! stops the program with the message. The C message starts with the C
  ! function that failed ("devmesh_comm_f: ..."); a Fortran caller is told
  ! the procedure it called instead (proc, e.g. 'devmesh_comm').
  subroutine finish(status, proc, ierr)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: proc
    integer, intent(out), optional :: ierr
    character(len=:), allocatable :: text
    integer :: colon
    if (status /= DEVMESH_SUCCESS) then
      text = from_c_string(c_last_error())
      colon = index(text, ': ')
      if (colon > 0 .and. index(text(1:max(colon - 1, 0)), ' ') == 0) text = text(colon + 2:)
      local_message = proc // ': ' // text
      local_pending = .true.
    end if
    call deliver(int(status), ierr)
  end subroutine finish

  ! A failure found here, before any C call.
  subroutine fail_local(status, message, ierr)
    integer, intent(in) :: status
    character(len=*), intent(in) :: message
    integer, intent(out), optional :: ierr
    local_message = message
    local_pending = .true.
    call deliver(status, ierr)
  end subroutine fail_local

  subroutine deliver(status, ierr)
    integer, intent(in) :: status
    integer, intent(out), optional :: ierr
    if (present(ierr)) then
      ierr = status
    else if (status /= DEVMESH_SUCCESS) then
      write(error_unit, '(a)') 'devmesh: ' // devmesh_last_error()
      error stop 'devmesh: a call without ierr failed'
    end if
  end subroutine deliver

  character(len=12) function itoa(i)
    integer, intent(in) :: i
    write(itoa, '(i0)') i
  end function itoa

  ! ---- creating and destroying ---------------------------------------------

  ! shape and names of different lengths are passed padded (a negative size,
  ! an empty name) so that the collective still runs and fails everywhere.
  subroutine create_common(parent, shape, names, mesh, ierr)
    integer, intent(in) :: parent
    integer, intent(in) :: shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    integer(c_int), allocatable :: shp(:)
    type(c_strings), target :: cs
    type(c_ptr) :: out
    integer(c_int) :: st
    integer :: n
    n = max(size(shape), size(names))
    allocate(shp(max(n, 1)))
    shp = -1
    shp(1:size(shape)) = int(shape, c_int)
    call to_c_strings(names, n, cs)
    out = mesh%ptr
    st = c_create_f(int(parent, c_int), int(n, c_int), shp, cs%ptr, out)
    if (st == DEVMESH_SUCCESS) mesh%ptr = out
    call finish(st, 'devmesh_create', ierr)
  end subroutine create_common

  subroutine create_f08(comm, shape, names, mesh, ierr)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    call create_common(comm%MPI_VAL, shape, names, mesh, ierr)
  end subroutine create_f08

  subroutine create_int(comm, shape, names, mesh, ierr)
    integer, intent(in) :: comm
    integer, intent(in) :: shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    call create_common(comm, shape, names, mesh, ierr)
  end subroutine create_int

  subroutine create_from_ranks_common(parent, shape, ranks, names, mesh, ierr)
    integer, intent(in) :: parent
    integer, intent(in) :: shape(:), ranks(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    call create_ex_common('devmesh_create_from_ranks', parent, shape, names, mesh, ierr, .true., ranks)
  end subroutine create_from_ranks_common

  subroutine create_from_ranks_f08(comm, shape, ranks, names, mesh, ierr)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: shape(:), ranks(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    call create_from_ranks_common(comm%MPI_VAL, shape, ranks, names, mesh, ierr)
  end subroutine create_from_ranks_f08

  subroutine create_from_ranks_int(comm, shape, ranks, names, mesh, ierr)
    integer, intent(in) :: comm
    integer, intent(in) :: shape(:), ranks(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    call create_from_ranks_common(comm, shape, ranks, names, mesh, ierr)
  end subroutine create_from_ranks_int

  ! shape and names padded as in create_common; each option a C string
  ! (c_null_ptr when absent or blank) living in its own buffer until the call
  ! returns; the rank list likewise, when `listed` (not an optional
  ! argument: gfortran passes a zero-size array such as [integer ::] on as
  ! absent, which would turn an empty list into none). `proc` names the
  ! caller's procedure in messages.
  subroutine create_ex_common(proc, parent, shape, names, mesh, ierr, listed, ranks, backend, dim_backends, &
                              backend_options, dim_options, host_aware, comm_errors)
    character(len=*), intent(in) :: proc
    integer, intent(in) :: parent
    integer, intent(in) :: shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    logical, intent(in) :: listed
    integer, intent(in) :: ranks(:)
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    logical, intent(in), optional :: host_aware
    integer, intent(in), optional :: comm_errors
    integer(c_int), allocatable :: shp(:)
    integer(c_int), allocatable, target :: rk(:)
    type(c_strings), target :: cs, cb, cdb, cbo, cdo
    type(c_config) :: cfg
    type(c_ptr) :: out
    integer(c_int) :: st
    integer :: n
    n = max(size(shape), size(names))
    allocate(shp(max(n, 1)))
    shp = -1
    shp(1:size(shape)) = int(shape, c_int)
    call to_c_strings(names, n, cs)
    cfg%size = c_sizeof(cfg)
    cfg%magic = config_magic
    cfg%version = version_code
    cfg%nranks = config_unset
    cfg%host_aware = config_unset
    cfg%comm_errors = config_unset
    if (present(backend)) call to_c_name(backend, cb, cfg%backend)
    if (present(dim_backends)) call to_c_name(dim_backends, cdb, cfg%dim_backends)
    if (present(backend_options)) call to_c_name(backend_options, cbo, cfg%backend_options)
    if (present(dim_options)) call to_c_name(dim_options, cdo, cfg%dim_options)
    if (listed) then
      ! An empty list is passed as nranks 0 (the C layer refuses it), with
      ! a valid pointer.
      allocate(rk(max(size(ranks), 1)))
      rk = 0
      rk(1:size(ranks)) = int(ranks, c_int)
      cfg%nranks = int(size(ranks), c_int)
      cfg%ranks = c_loc(rk)
    end if
    if (present(host_aware)) cfg%host_aware = merge(1_c_int, 0_c_int, host_aware)
    if (present(comm_errors)) cfg%comm_errors = int(comm_errors, c_int)
    out = mesh%ptr
    st = c_create_ex_f(int(parent, c_int), int(n, c_int), shp, cs%ptr, cfg, out)
    if (st == DEVMESH_SUCCESS) mesh%ptr = out
    call finish(st, proc, ierr)
  end subroutine create_ex_common

  subroutine create_ex_f08(comm, shape, names, mesh, ierr, backend, dim_backends, backend_options, dim_options, &
                           ranks, host_aware, comm_errors)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    integer, intent(in), optional :: ranks(:)
    logical, intent(in), optional :: host_aware
    integer, intent(in), optional :: comm_errors
    if (present(ranks)) then
      call create_ex_common('devmesh_create_ex', comm%MPI_VAL, shape, names, mesh, ierr, .true., ranks, backend, &
                            dim_backends, backend_options, dim_options, host_aware, comm_errors)
    else
      call create_ex_common('devmesh_create_ex', comm%MPI_VAL, shape, names, mesh, ierr, .false., [integer ::], &
                            backend, dim_backends, backend_options, dim_options, host_aware, comm_errors)
    end if
  end subroutine create_ex_f08

  subroutine create_ex_int(comm, shape, names, mesh, ierr, backend, dim_backends, backend_options, dim_options, &
                           ranks, host_aware, comm_errors)
    integer, intent(in) :: comm
    integer, intent(in) :: shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    integer, intent(in), optional :: ranks(:)
    logical, intent(in), optional :: host_aware
    integer, intent(in), optional :: comm_errors
    if (present(ranks)) then
      call create_ex_common('devmesh_create_ex', comm, shape, names, mesh, ierr, .true., ranks, backend, &
                            dim_backends, backend_options, dim_options, host_aware, comm_errors)
    else
      call create_ex_common('devmesh_create_ex', comm, shape, names, mesh, ierr, .false., [integer ::], &
                            backend, dim_backends, backend_options, dim_options, host_aware, comm_errors)
    end if
  end subroutine create_ex_int

  !> Releases the handle and nulls it; a null handle is accepted. Not
  !> collective.
  subroutine devmesh_destroy(mesh, ierr)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    call finish(c_destroy(mesh%ptr), 'devmesh_destroy', ierr)
  end subroutine devmesh_destroy

  !> True for a handle that holds a mesh (false for the null handle).
  logical function devmesh_associated(mesh)
    type(devmesh_t), intent(in) :: mesh
    devmesh_associated = c_associated(mesh%ptr)
  end function devmesh_associated

  ! ---- views (not collective) -----------------------------------------------

  !> The view with exactly the named dims, in the order given.
  subroutine devmesh_slice(mesh, dims, out, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dims(:)
    type(devmesh_t), intent(inout) :: out
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: res
    integer(c_int) :: st
    call to_c_strings(dims, size(dims), cs)
    res = out%ptr
    st = c_slice(mesh%ptr, int(size(dims), c_int), cs%ptr, res)
    if (st == DEVMESH_SUCCESS) out%ptr = res
    call finish(st, 'devmesh_slice', ierr)
  end subroutine devmesh_slice

  !> The dims of meshes(1), then meshes(2), ...: a view of one root made of
  !> dims taken from several views (devmesh_concatenate).
  subroutine devmesh_concatenate(meshes, out, ierr)
    type(devmesh_t), intent(in) :: meshes(:)
    type(devmesh_t), intent(inout) :: out
    integer, intent(out), optional :: ierr
    type(c_ptr) :: ptrs(max(1, size(meshes)))
    type(c_ptr) :: res
    integer(c_int) :: st
    integer :: i
    ptrs = c_null_ptr
    do i = 1, size(meshes)
      ptrs(i) = meshes(i)%ptr
    end do
    res = out%ptr
    st = c_concatenate(int(size(meshes), c_int), ptrs, res)
    if (st == DEVMESH_SUCCESS) out%ptr = res
    call finish(st, 'devmesh_concatenate', ierr)
  end subroutine devmesh_concatenate

  !> A 1-D view of all dims of mesh; name absent or blank: the dim names
  !> joined with '_'. Pass out by keyword when name is omitted.
  subroutine devmesh_flatten(mesh, name, out, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in), optional :: name
    type(devmesh_t), intent(inout) :: out
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: res, cname
    integer(c_int) :: st
    cname = c_null_ptr
    if (present(name)) call to_c_name(name, cs, cname)
    res = out%ptr
    st = c_flatten(mesh%ptr, cname, res)
    if (st == DEVMESH_SUCCESS) out%ptr = res
    call finish(st, 'devmesh_flatten', ierr)
  end subroutine devmesh_flatten

  !> Replaces dim by size(sizes) dims, split row-major; one size may be -1
  !> (inferred: the dim's size over the product of the others).
  subroutine devmesh_unflatten(mesh, dim, sizes, names, out, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    integer, intent(in) :: sizes(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: out
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs, cdim
    type(c_ptr) :: res
    integer(c_int) :: st
    integer(c_int), allocatable :: s(:)
    if (size(sizes) /= size(names)) then
      call fail_local(DEVMESH_ERR_INVALID_ARGUMENT, 'devmesh_unflatten: got ' // trim(itoa(size(sizes))) // &
                      ' sizes but ' // trim(itoa(size(names))) // ' names', ierr)
      return
    end if
    call to_c_strings([dim], 1, cdim)
    call to_c_strings(names, size(names), cs)
    allocate(s(max(size(sizes), 1)))
    s = 0
    s(1:size(sizes)) = int(sizes, c_int)
    res = out%ptr
    st = c_unflatten(mesh%ptr, cdim%ptr(1), int(size(sizes), c_int), s, cs%ptr, res)
    if (st == DEVMESH_SUCCESS) out%ptr = res
    call finish(st, 'devmesh_unflatten', ierr)
  end subroutine devmesh_unflatten

  !> The root view of mesh's root.
  subroutine devmesh_root(mesh, out, ierr)
    type(devmesh_t), intent(in) :: mesh
    type(devmesh_t), intent(inout) :: out
    integer, intent(out), optional :: ierr
    type(c_ptr) :: res
    integer(c_int) :: st
    res = out%ptr
    st = c_root(mesh%ptr, res)
    if (st == DEVMESH_SUCCESS) out%ptr = res
    call finish(st, 'devmesh_root', ierr)
  end subroutine devmesh_root

  ! ---- queries (not collective) ---------------------------------------------

  subroutine devmesh_ndim(mesh, ndim, ierr)
    type(devmesh_t), intent(in) :: mesh
    integer, intent(inout) :: ndim
    integer, intent(out), optional :: ierr
    integer(c_int) :: v, st
    st = c_ndim(mesh%ptr, v)
    if (st == DEVMESH_SUCCESS) ndim = int(v)
    call finish(st, 'devmesh_ndim', ierr)
  end subroutine devmesh_ndim

  !> Size of dim; a blank dim: the whole view's size.
  subroutine devmesh_size(mesh, dim, size, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    integer, intent(inout) :: size
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    integer(c_int) :: v, st
    call to_c_name(dim, cs, cdim)
    st = c_size(mesh%ptr, cdim, v)
    if (st == DEVMESH_SUCCESS) size = int(v)
    call finish(st, 'devmesh_size', ierr)
  end subroutine devmesh_size

  !> Name of dim number index (1-based, like coord(index)) into a
  !> character(len=:), allocatable variable.
  subroutine devmesh_dim_name(mesh, index, name, ierr)
    type(devmesh_t), intent(in) :: mesh
    integer, intent(in) :: index
    character(len=:), allocatable, intent(inout) :: name
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    integer(c_int) :: st
    p = c_null_ptr
    st = c_dim_name(mesh%ptr, int(index - 1, c_int), p)
    if (st == DEVMESH_SUCCESS) name = from_c_string(p)
    call finish(st, 'devmesh_dim_name', ierr)
  end subroutine devmesh_dim_name

  !> The caller's local rank (0-based) along dim.
  subroutine devmesh_local_rank(mesh, dim, rank, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    integer, intent(inout) :: rank
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    integer(c_int) :: v, st
    call to_c_name(dim, cs, cdim)
    st = c_local_rank(mesh%ptr, cdim, v)
    if (st == DEVMESH_SUCCESS) rank = int(v)
    call finish(st, 'devmesh_local_rank', ierr)
  end subroutine devmesh_local_rank

  !> The caller's coordinate: coord(i) is its 0-based local rank along dim i.
  subroutine devmesh_coordinate(mesh, coord, ierr)
    type(devmesh_t), intent(in) :: mesh
    integer, intent(inout) :: coord(:)
    integer, intent(out), optional :: ierr
    integer(c_int), allocatable :: c(:)
    integer(c_int) :: st
    ! The C side checks size(coord) against the result and writes nothing
    ! when it is too small; entries it does not write keep their values.
    allocate(c(max(size(coord), 1)))
    c(1:size(coord)) = int(coord, c_int)
    st = c_coordinate(mesh%ptr, int(size(coord), c_int), c)
    if (st == DEVMESH_SUCCESS) coord = int(c(1:size(coord)))
    call finish(st, 'devmesh_coordinate', ierr)
  end subroutine devmesh_coordinate

  !> The parent ranks (0-based) of the caller's group along dim, in
  !> local-rank order: ranks(k+1) has local rank k.
  subroutine devmesh_group_ranks(mesh, dim, ranks, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    integer, intent(inout) :: ranks(:)
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    integer(c_int), allocatable :: r(:)
    integer(c_int) :: st
    call to_c_name(dim, cs, cdim)
    allocate(r(max(size(ranks), 1)))
    r(1:size(ranks)) = int(ranks, c_int)
    st = c_group_ranks(mesh%ptr, cdim, int(size(ranks), c_int), r)
    if (st == DEVMESH_SUCCESS) ranks = int(r(1:size(ranks)))
    call finish(st, 'devmesh_group_ranks', ierr)
  end subroutine devmesh_group_ranks

  !> Communicators the root has created so far (its own included).
  subroutine devmesh_comm_count(mesh, count, ierr)
    type(devmesh_t), intent(in) :: mesh
    integer, intent(inout) :: count
    integer, intent(out), optional :: ierr
    integer(c_int) :: v, st
    st = c_comm_count(mesh%ptr, v)
    if (st == DEVMESH_SUCCESS) count = int(v)
    call finish(st, 'devmesh_comm_count', ierr)
  end subroutine devmesh_comm_count

  ! ---- communicators ------------------------------------------------------------

  subroutine comm_common(mesh, dim, handle, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    integer, intent(inout) :: handle
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    integer(c_int) :: v, st
    call to_c_name(dim, cs, cdim)
    st = c_comm_f(mesh%ptr, cdim, v)
    if (st == DEVMESH_SUCCESS) handle = int(v)
    call finish(st, 'devmesh_comm', ierr)
  end subroutine comm_common

  subroutine comm_f08(mesh, dim, comm, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(MPI_Comm), intent(inout) :: comm
    integer, intent(out), optional :: ierr
    call comm_common(mesh, dim, comm%MPI_VAL, ierr)
  end subroutine comm_f08

  subroutine comm_int(mesh, dim, comm, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    integer, intent(inout) :: comm
    integer, intent(out), optional :: ierr
    call comm_common(mesh, dim, comm, ierr)
  end subroutine comm_int

  subroutine cart_comm_f08(mesh, comm, ierr)
    type(devmesh_t), intent(in) :: mesh
    type(MPI_Comm), intent(inout) :: comm
    integer, intent(out), optional :: ierr
    integer(c_int) :: v, st
    st = c_cart_comm_f(mesh%ptr, v)
    if (st == DEVMESH_SUCCESS) comm%MPI_VAL = int(v)
    call finish(st, 'devmesh_cart_comm', ierr)
  end subroutine cart_comm_f08

  subroutine cart_comm_int(mesh, comm, ierr)
    type(devmesh_t), intent(in) :: mesh
    integer, intent(inout) :: comm
    integer, intent(out), optional :: ierr
    integer(c_int) :: v, st
    st = c_cart_comm_f(mesh%ptr, v)
    if (st == DEVMESH_SUCCESS) comm = int(v)
    call finish(st, 'devmesh_cart_comm', ierr)
  end subroutine cart_comm_int

  !> Creates the communicators of every dim of mesh at once (path: one of
  !> DEVMESH_COMM_PATH_*, default automatic). Collective over all members
  !> of the root.
  subroutine devmesh_create_comms(mesh, path, ierr)
    type(devmesh_t), intent(in) :: mesh
    integer, intent(in), optional :: path
    integer, intent(out), optional :: ierr
    integer(c_int) :: p
    p = DEVMESH_COMM_PATH_AUTOMATIC
    if (present(path)) p = int(path, c_int)
    call finish(c_create_comms(mesh%ptr, p), 'devmesh_create_comms', ierr)
  end subroutine devmesh_create_comms

  ! ---- errors ----------------------------------------------------------------------

  !> The detail of the last failed devmesh call on this thread (or of the
  !> last failure this module found before calling C); '' if none.
  function devmesh_last_error() result(message)
    character(len=:), allocatable :: message
    if (local_pending) then
      message = local_message
    else
      message = from_c_string(c_last_error())
    end if
  end function devmesh_last_error

  !> A short description of a status value.
  function devmesh_status_string(status) result(text)
    integer, intent(in) :: status
    character(len=:), allocatable :: text
    text = from_c_string(c_status_string(int(status, c_int)))
  end function devmesh_status_string

  ! ---- collectives over a dim, in the dim's backend ----------------------------
  !
  ! As in C (devmesh.h): collective over the caller's group along dim
  ! (send/recv: between the two ranks), the first call on a dim creating its
  ! communicator; count elements of datatype (DEVMESH_INT8 ..
  ! DEVMESH_FLOAT64), op one of DEVMESH_SUM, _PROD, _MIN, _MAX; in place as
  ! in C (pass the same array, or the caller's block, as in MPI). Buffers are
  ! arrays of any type and rank (assumed-rank, TS 29113), passed by address:
  ! give contiguous arrays (a non-contiguous section is copied in and out
  ! by the compiler, which NCCL's stream-ordered calls cannot use). stream
  ! (optional, c_ptr) is the backend's stream, e.g. a cudaStream_t for
  ! NCCL; absent: the communicator's own. A negative count gives
  ! DEVMESH_ERR_INVALID_ARGUMENT here. The same subroutines serve mpi_f08
  ! and `use mpi` programs: no MPI handle is involved.

  ! The address of a buffer argument, or c_null_ptr for an absent stream.
  function addr(buf) result(p)
    type(*), dimension(..), intent(in), target, contiguous :: buf
    type(c_ptr) :: p
    p = c_loc(buf)
  end function addr

  function stream_arg(stream) result(p)
    type(c_ptr), intent(in), optional :: stream
    type(c_ptr) :: p
    p = c_null_ptr
    if (present(stream)) p = stream
  end function stream_arg

  logical function bad_count(count, ierr)
    integer, intent(in) :: count
    integer, intent(out), optional :: ierr
    bad_count = count < 0
    if (bad_count) call fail_local(DEVMESH_ERR_INVALID_ARGUMENT, &
                                   'negative count ' // trim(itoa(count)), ierr)
  end function bad_count

  !> recvbuf(i) = op over the group of sendbuf(i), i <= count.
  subroutine devmesh_allreduce(mesh, dim, sendbuf, recvbuf, count, datatype, op, stream, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer, intent(in) :: count, datatype, op
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    if (bad_count(count, ierr)) return
    call to_c_name(dim, cs, cdim)
    call finish(c_allreduce(mesh%ptr, cdim, addr(sendbuf), addr(recvbuf), int(count, c_size_t), &
                            int(datatype, c_int), int(op, c_int), stream_arg(stream)), 'devmesh_allreduce', ierr)
  end subroutine devmesh_allreduce

  !> recvbuf holds size(dim) blocks of count elements, block r from local rank r.
  subroutine devmesh_allgather(mesh, dim, sendbuf, recvbuf, count, datatype, stream, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer, intent(in) :: count, datatype
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    if (bad_count(count, ierr)) return
    call to_c_name(dim, cs, cdim)
    call finish(c_allgather(mesh%ptr, cdim, addr(sendbuf), addr(recvbuf), int(count, c_size_t), &
                            int(datatype, c_int), stream_arg(stream)), 'devmesh_allgather', ierr)
  end subroutine devmesh_allgather

  !> recvbuf(i) = op over the group of block (local rank) of sendbuf.
  subroutine devmesh_reduce_scatter(mesh, dim, sendbuf, recvbuf, count, datatype, op, stream, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer, intent(in) :: count, datatype, op
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    if (bad_count(count, ierr)) return
    call to_c_name(dim, cs, cdim)
    call finish(c_reduce_scatter(mesh%ptr, cdim, addr(sendbuf), addr(recvbuf), int(count, c_size_t), &
                                 int(datatype, c_int), int(op, c_int), stream_arg(stream)), 'devmesh_reduce_scatter', ierr)
  end subroutine devmesh_reduce_scatter

  !> buffer of every member = buffer of local rank root (0-based).
  subroutine devmesh_broadcast(mesh, dim, buffer, count, datatype, root, stream, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(*), dimension(..), intent(inout), target, contiguous :: buffer
    integer, intent(in) :: count, datatype, root
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    if (bad_count(count, ierr)) return
    call to_c_name(dim, cs, cdim)
    call finish(c_broadcast(mesh%ptr, cdim, addr(buffer), int(count, c_size_t), int(datatype, c_int), &
                            int(root, c_int), stream_arg(stream)), 'devmesh_broadcast', ierr)
  end subroutine devmesh_broadcast

  !> Block r of recvbuf = block (local rank) of local rank r's sendbuf.
  subroutine devmesh_alltoall(mesh, dim, sendbuf, recvbuf, count, datatype, stream, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer, intent(in) :: count, datatype
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    if (bad_count(count, ierr)) return
    call to_c_name(dim, cs, cdim)
    call finish(c_alltoall(mesh%ptr, cdim, addr(sendbuf), addr(recvbuf), int(count, c_size_t), &
                           int(datatype, c_int), stream_arg(stream)), 'devmesh_alltoall', ierr)
  end subroutine devmesh_alltoall

  subroutine devmesh_barrier(mesh, dim, stream, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    call to_c_name(dim, cs, cdim)
    call finish(c_barrier(mesh%ptr, cdim, stream_arg(stream)), 'devmesh_barrier', ierr)
  end subroutine devmesh_barrier

  !> To local rank peer (0-based) of the group along dim.
  subroutine devmesh_send(mesh, dim, buffer, count, datatype, peer, stream, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(*), dimension(..), intent(in), target, contiguous :: buffer
    integer, intent(in) :: count, datatype, peer
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    if (bad_count(count, ierr)) return
    call to_c_name(dim, cs, cdim)
    call finish(c_send(mesh%ptr, cdim, addr(buffer), int(count, c_size_t), int(datatype, c_int), &
                       int(peer, c_int), stream_arg(stream)), 'devmesh_send', ierr)
  end subroutine devmesh_send

  !> From local rank peer (0-based) of the group along dim.
  subroutine devmesh_recv(mesh, dim, buffer, count, datatype, peer, stream, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(*), dimension(..), intent(inout), target, contiguous :: buffer
    integer, intent(in) :: count, datatype, peer
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    if (bad_count(count, ierr)) return
    call to_c_name(dim, cs, cdim)
    call finish(c_recv(mesh%ptr, cdim, addr(buffer), int(count, c_size_t), int(datatype, c_int), &
                       int(peer, c_int), stream_arg(stream)), 'devmesh_recv', ierr)
  end subroutine devmesh_recv

  ! ---- more queries, hosts, backends, version (C parity) -------------------

  !> The view's sizes in dim order: shape(i) is the size of dim i. Not
  !> collective. shape must hold ndim entries (as coord).
  subroutine devmesh_shape(mesh, shape, ierr)
    type(devmesh_t), intent(in) :: mesh
    integer, intent(inout) :: shape(:)
    integer, intent(out), optional :: ierr
    integer(c_int), allocatable :: c(:)
    integer(c_int) :: st
    allocate(c(max(size(shape), 1)))
    c(1:size(shape)) = int(shape, c_int)
    st = c_shape(mesh%ptr, int(size(shape), c_int), c)
    if (st == DEVMESH_SUCCESS) shape = int(c(1:size(shape)))
    call finish(st, 'devmesh_shape', ierr)
  end subroutine devmesh_shape

  !> Every group of dim, each in local-rank order, groups ordered by their
  !> smallest root index: W / n groups of n parent ranks (0-based), n the
  !> size of dim and W devmesh_root_size; group g (1-based) is
  !> ranks((g-1)*n+1 : g*n). ranks must hold W entries. Not collective.
  subroutine devmesh_all_groups(mesh, dim, ranks, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    integer, intent(inout) :: ranks(:)
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    integer(c_int), allocatable :: r(:)
    integer(c_int) :: st
    call to_c_name(dim, cs, cdim)
    allocate(r(max(size(ranks), 1)))
    r(1:size(ranks)) = int(ranks, c_int)
    st = c_all_groups(mesh%ptr, cdim, int(size(ranks), c_int), r)
    if (st == DEVMESH_SUCCESS) ranks = int(r(1:size(ranks)))
    call finish(st, 'devmesh_all_groups', ierr)
  end subroutine devmesh_all_groups

  !> W: the number of ranks of mesh's root. Not collective.
  subroutine devmesh_root_size(mesh, size, ierr)
    type(devmesh_t), intent(in) :: mesh
    integer, intent(inout) :: size
    integer, intent(out), optional :: ierr
    integer(c_int) :: v, st
    st = c_root_size(mesh%ptr, v)
    if (st == DEVMESH_SUCCESS) size = int(v)
    call finish(st, 'devmesh_root_size', ierr)
  end subroutine devmesh_root_size

  !> The caller's rank (0-based) in the parent communicator. Not collective.
  subroutine devmesh_parent_rank(mesh, rank, ierr)
    type(devmesh_t), intent(in) :: mesh
    integer, intent(inout) :: rank
    integer, intent(out), optional :: ierr
    integer(c_int) :: v, st
    st = c_parent_rank(mesh%ptr, v)
    if (st == DEVMESH_SUCCESS) rank = int(v)
    call finish(st, 'devmesh_parent_rank', ierr)
  end subroutine devmesh_parent_rank

  subroutine create_hosts_common(parent, mesh, ierr, host_dim, local_dim)
    integer, intent(in) :: parent
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: host_dim, local_dim
    type(c_strings), target :: ch, cl
    type(c_ptr) :: out, hp, lp
    integer(c_int) :: st
    hp = c_null_ptr
    lp = c_null_ptr
    if (present(host_dim)) call to_c_name(host_dim, ch, hp)
    if (present(local_dim)) call to_c_name(local_dim, cl, lp)
    out = mesh%ptr
    st = c_create_hosts_f(int(parent, c_int), hp, lp, out)
    if (st == DEVMESH_SUCCESS) mesh%ptr = out
    call finish(st, 'devmesh_create_hosts', ierr)
  end subroutine create_hosts_common

  subroutine create_hosts_f08(comm, mesh, ierr, host_dim, local_dim)
    type(MPI_Comm), intent(in) :: comm
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: host_dim, local_dim
    call create_hosts_common(comm%MPI_VAL, mesh, ierr, host_dim, local_dim)
  end subroutine create_hosts_f08

  subroutine create_hosts_int(comm, mesh, ierr, host_dim, local_dim)
    integer, intent(in) :: comm
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: host_dim, local_dim
    call create_hosts_common(comm, mesh, ierr, host_dim, local_dim)
  end subroutine create_hosts_int

  !> within = .true. when every group of dim stays within one host. Needs a
  !> mesh made by devmesh_create_hosts or by devmesh_create_ex with
  !> host_aware=.true. (else DEVMESH_ERR_INVALID_ARGUMENT). Not collective.
  subroutine devmesh_dim_within_hosts(mesh, dim, within, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    logical, intent(inout) :: within
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    integer(c_int) :: v, st
    call to_c_name(dim, cs, cdim)
    v = 0
    st = c_dim_within_hosts(mesh%ptr, cdim, v)
    if (st == DEVMESH_SUCCESS) within = v /= 0
    call finish(st, 'devmesh_dim_within_hosts', ierr)
  end subroutine devmesh_dim_within_hosts

  !> The name of dim's backend, e.g. 'mpi', into a character(len=:),
  !> allocatable variable. Not collective.
  subroutine devmesh_dim_backend(mesh, dim, backend, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    character(len=:), allocatable, intent(inout) :: backend
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim, p
    integer(c_int) :: st
    call to_c_name(dim, cs, cdim)
    p = c_null_ptr
    st = c_dim_backend(mesh%ptr, cdim, p)
    if (st == DEVMESH_SUCCESS) backend = from_c_string(p)
    call finish(st, 'devmesh_dim_backend', ierr)
  end subroutine devmesh_dim_backend

  !> The caller's communicator along dim in the dim's backend: handle is the
  !> C address of the backend's own handle (a C MPI_Comm for 'mpi', an
  !> ncclComm_t for 'nccl'), owned by devmesh, for passing to C or to the
  !> backend's own Fortran binding; for an MPI handle in Fortran use
  !> devmesh_comm. backend: the backend the caller expects (absent or
  !> blank: any; another one than the dim's gives
  !> DEVMESH_ERR_INVALID_ARGUMENT). Collective as devmesh_comm the first
  !> time.
  subroutine devmesh_backend_comm(mesh, dim, handle, ierr, backend)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(c_ptr), intent(inout) :: handle
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend
    type(c_strings), target :: cs, cb
    type(c_ptr) :: cdim, cback, h
    integer(c_int) :: st
    call to_c_name(dim, cs, cdim)
    cback = c_null_ptr
    if (present(backend)) call to_c_name(backend, cb, cback)
    h = handle
    st = c_backend_comm(mesh%ptr, cdim, cback, h)
    if (st == DEVMESH_SUCCESS) handle = h
    call finish(st, 'devmesh_backend_comm', ierr)
  end subroutine devmesh_backend_comm

  !> The library's version (of the shared object the program runs with).
  !> Each argument is optional. Not collective.
  subroutine devmesh_version(major, minor, patch, ierr)
    integer, intent(inout), optional :: major, minor, patch
    integer, intent(out), optional :: ierr
    integer(c_int) :: a, b, c, st
    st = c_version(a, b, c)
    if (st == DEVMESH_SUCCESS) then
      if (present(major)) major = int(a)
      if (present(minor)) minor = int(b)
      if (present(patch)) patch = int(c)
    end if
    call finish(st, 'devmesh_version', ierr)
  end subroutine devmesh_version

  ! ---- non-blocking point to point and sendrecv (devmesh.h) -----------------
  ! Not collective: between the ranks named. peer MPI_PROC_NULL does nothing
  ! (request stays the null request). The buffer of a pending request must
  ! not be touched (irecv) or changed (isend) until devmesh_wait or
  ! devmesh_test ends it: declare it ASYNCHRONOUS in the caller (Fortran
  ! 2018, 18.10.4), so that the compiler does not move or cache it across
  ! the calls; the dummy arguments here are ASYNCHRONOUS too. request is
  ! written only on success.

  !> Starts sending count elements to local rank peer (0-based).
  subroutine devmesh_isend(mesh, dim, buffer, count, datatype, peer, request, stream, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(*), dimension(..), intent(in), target, contiguous, asynchronous :: buffer
    integer, intent(in) :: count, datatype, peer
    type(devmesh_request_t), intent(inout) :: request
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    if (bad_count(count, ierr)) return
    call to_c_name(dim, cs, cdim)
    call finish(c_isend(mesh%ptr, cdim, addr(buffer), int(count, c_size_t), int(datatype, c_int), &
                        int(peer, c_int), stream_arg(stream), request%ptr), 'devmesh_isend', ierr)
  end subroutine devmesh_isend

  !> Starts receiving count elements from local rank peer (0-based).
  subroutine devmesh_irecv(mesh, dim, buffer, count, datatype, peer, request, stream, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(*), dimension(..), intent(inout), target, contiguous, asynchronous :: buffer
    integer, intent(in) :: count, datatype, peer
    type(devmesh_request_t), intent(inout) :: request
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    if (bad_count(count, ierr)) return
    call to_c_name(dim, cs, cdim)
    call finish(c_irecv(mesh%ptr, cdim, addr(buffer), int(count, c_size_t), int(datatype, c_int), &
                        int(peer, c_int), stream_arg(stream), request%ptr), 'devmesh_irecv', ierr)
  end subroutine devmesh_irecv

  !> Blocks until request is done; request becomes the null request.
  subroutine devmesh_wait(request, ierr)
    type(devmesh_request_t), intent(inout) :: request
    integer, intent(out), optional :: ierr
    call finish(c_wait(request%ptr), 'devmesh_wait', ierr)
  end subroutine devmesh_wait

  !> done = .true. (and request the null request) when request is done;
  !> never blocks.
  subroutine devmesh_test(request, done, ierr)
    type(devmesh_request_t), intent(inout) :: request
    logical, intent(out) :: done
    integer, intent(out), optional :: ierr
    integer(c_int) :: d
    d = 0
    call finish(c_test(request%ptr, d), 'devmesh_test', ierr)
    done = d /= 0
  end subroutine devmesh_test

  !> devmesh_wait on every request; all end even when one fails.
  subroutine devmesh_waitall(requests, ierr)
    type(devmesh_request_t), intent(inout) :: requests(:)
    integer, intent(out), optional :: ierr
    type(c_ptr), allocatable :: p(:)
    integer :: i
    allocate(p(size(requests)))
    do i = 1, size(requests)
      p(i) = requests(i)%ptr
    end do
    i = c_waitall(int(size(requests), c_int), p)
    requests(:)%ptr = p
    call finish(i, 'devmesh_waitall', ierr)
  end subroutine devmesh_waitall

  !> Sends to local rank dest and receives from local rank source at once
  !> (MPI_Sendrecv); either may be MPI_PROC_NULL.
  subroutine devmesh_sendrecv(mesh, dim, sendbuf, sendcount, sendtype, dest, recvbuf, recvcount, recvtype, &
                              source, stream, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer, intent(in) :: sendcount, sendtype, dest, recvcount, recvtype, source
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    if (bad_count(sendcount, ierr)) return
    if (bad_count(recvcount, ierr)) return
    call to_c_name(dim, cs, cdim)
    call finish(c_sendrecv(mesh%ptr, cdim, addr(sendbuf), int(sendcount, c_size_t), int(sendtype, c_int), &
                           int(dest, c_int), addr(recvbuf), int(recvcount, c_size_t), int(recvtype, c_int), &
                           int(source, c_int), stream_arg(stream)), 'devmesh_sendrecv', ierr)
  end subroutine devmesh_sendrecv

  ! ---- Cartesian views, neighbours, groups with their communicator ----------

  subroutine cart_comm_periodic_common(mesh, periodic, handle, ierr)
    type(devmesh_t), intent(in) :: mesh
    logical, intent(in) :: periodic(:)
    integer, intent(inout) :: handle
    integer, intent(out), optional :: ierr
    integer(c_int) :: p(max(size(periodic), 1)), v, st
    p = 0
    where (periodic) p(1:size(periodic)) = 1
    st = c_cart_comm_periodic_f(mesh%ptr, int(size(periodic), c_int), p, v)
    if (st == DEVMESH_SUCCESS) handle = int(v)
    call finish(st, 'devmesh_cart_comm_periodic', ierr)
  end subroutine cart_comm_periodic_common

  subroutine cart_comm_periodic_f08(mesh, periodic, comm, ierr)
    type(devmesh_t), intent(in) :: mesh
    logical, intent(in) :: periodic(:)
    type(MPI_Comm), intent(inout) :: comm
    integer, intent(out), optional :: ierr
    call cart_comm_periodic_common(mesh, periodic, comm%MPI_VAL, ierr)
  end subroutine cart_comm_periodic_f08

  subroutine cart_comm_periodic_int(mesh, periodic, comm, ierr)
    type(devmesh_t), intent(in) :: mesh
    logical, intent(in) :: periodic(:)
    integer, intent(inout) :: comm
    integer, intent(out), optional :: ierr
    call cart_comm_periodic_common(mesh, periodic, comm, ierr)
  end subroutine cart_comm_periodic_int

  !> devmesh_neighbors(mesh, dim, prev, next [, ierr] [, parent_prev=]
  !>                   [, parent_next=] [, periodic=] [, distance=])
  !> The caller's neighbours along dim (blank: the only dim), as
  !> MPI_Cart_shift(distance) gives them (default 1, any sign): 0-based
  !> local ranks k - distance (prev) and k + distance (next), wrapped when
  !> periodic (default .false.), else MPI_PROC_NULL at an open edge; and
  !> the same as parent ranks. Not collective.
  subroutine devmesh_neighbors(mesh, dim, prev, next, ierr, parent_prev, parent_next, periodic, distance)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    integer, intent(inout) :: prev, next
    integer, intent(out), optional :: ierr
    integer, intent(inout), optional :: parent_prev, parent_next
    logical, intent(in), optional :: periodic
    integer, intent(in), optional :: distance
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    integer(c_int) :: per, dist, p, n, pp, pn, st
    per = 0
    if (present(periodic)) then
      if (periodic) per = 1
    end if
    dist = 1
    if (present(distance)) dist = int(distance, c_int)
    call to_c_name(dim, cs, cdim)
    st = c_neighbors(mesh%ptr, cdim, per, dist, p, n, pp, pn)
    if (st == DEVMESH_SUCCESS) then
      prev = int(p)
      next = int(n)
      if (present(parent_prev)) parent_prev = int(pp)
      if (present(parent_next)) parent_next = int(pn)
    end if
    call finish(st, 'devmesh_neighbors', ierr)
  end subroutine devmesh_neighbors

  subroutine all_groups_comm_common(mesh, dim, ranks, own, handle, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    integer, intent(inout) :: ranks(:)
    integer, intent(inout) :: own, handle
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    integer(c_int), allocatable :: r(:)
    integer(c_int) :: o, v, st
    call to_c_name(dim, cs, cdim)
    allocate(r(max(size(ranks), 1)))
    r(1:size(ranks)) = int(ranks, c_int)
    st = c_all_groups_comm_f(mesh%ptr, cdim, int(size(ranks), c_int), r, o, v)
    if (st == DEVMESH_SUCCESS) then
      ranks = int(r(1:size(ranks)))
      own = int(o)
      handle = int(v)
    end if
    call finish(st, 'devmesh_all_groups_comm', ierr)
  end subroutine all_groups_comm_common

  subroutine all_groups_comm_f08(mesh, dim, ranks, own, comm, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    integer, intent(inout) :: ranks(:)
    integer, intent(inout) :: own
    type(MPI_Comm), intent(inout) :: comm
    integer, intent(out), optional :: ierr
    call all_groups_comm_common(mesh, dim, ranks, own, comm%MPI_VAL, ierr)
  end subroutine all_groups_comm_f08

  subroutine all_groups_comm_int(mesh, dim, ranks, own, comm, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    integer, intent(inout) :: ranks(:)
    integer, intent(inout) :: own, comm
    integer, intent(out), optional :: ierr
    call all_groups_comm_common(mesh, dim, ranks, own, comm, ierr)
  end subroutine all_groups_comm_int

  ! ---- adopted communicators and MPI Sessions ---------------------------------

  ! The config of the backend options (absent or blank: unset); the option
  ! strings live in cb.. until the caller's call returns.
  subroutine options_config(cfg, cb, cdb, cbo, cdo, backend, dim_backends, backend_options, dim_options)
    type(c_config), intent(out) :: cfg
    type(c_strings), intent(inout), target :: cb, cdb, cbo, cdo
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    cfg%size = c_sizeof(cfg)
    cfg%magic = config_magic
    cfg%version = version_code
    cfg%nranks = config_unset
    cfg%host_aware = config_unset
    cfg%comm_errors = config_unset
    if (present(backend)) call to_c_name(backend, cb, cfg%backend)
    if (present(dim_backends)) call to_c_name(dim_backends, cdb, cfg%dim_backends)
    if (present(backend_options)) call to_c_name(backend_options, cbo, cfg%backend_options)
    if (present(dim_options)) call to_c_name(dim_options, cdo, cfg%dim_options)
  end subroutine options_config

  ! comms (with MPI_COMM_NULL) and names padded as in create_common: the C
  ! layer then reports a count mismatch as a NULL name or a null
  ! communicator among others.
  subroutine create_from_comms_common(parent, comms, names, mesh, ierr, backend, dim_backends, &
                                      backend_options, dim_options)
    integer, intent(in) :: parent
    integer, intent(in) :: comms(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    integer(c_int), allocatable :: cc(:)
    type(c_strings), target :: cs, cb, cdb, cbo, cdo
    type(c_config) :: cfg
    type(c_ptr) :: out
    integer(c_int) :: st
    integer :: n
    n = max(size(comms), size(names))
    allocate(cc(max(n, 1)))
    cc = int(MPI_COMM_NULL%MPI_VAL, c_int)
    cc(1:size(comms)) = int(comms, c_int)
    call to_c_strings(names, n, cs)
    call options_config(cfg, cb, cdb, cbo, cdo, backend, dim_backends, backend_options, dim_options)
    out = mesh%ptr
    st = c_create_from_comms_f(int(parent, c_int), int(n, c_int), cc, cs%ptr, cfg, out)
    if (st == DEVMESH_SUCCESS) mesh%ptr = out
    call finish(st, 'devmesh_create_from_comms', ierr)
  end subroutine create_from_comms_common

  subroutine create_from_comms_f08(parent, comms, names, mesh, ierr, backend, dim_backends, backend_options, &
                                   dim_options)
    type(MPI_Comm), intent(in) :: parent
    type(MPI_Comm), intent(in) :: comms(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    call create_from_comms_common(parent%MPI_VAL, comms(:)%MPI_VAL, names, mesh, ierr, backend, dim_backends, &
                                  backend_options, dim_options)
  end subroutine create_from_comms_f08

  subroutine create_from_comms_int(parent, comms, names, mesh, ierr, backend, dim_backends, backend_options, &
                                   dim_options)
    integer, intent(in) :: parent
    integer, intent(in) :: comms(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    call create_from_comms_common(parent, comms, names, mesh, ierr, backend, dim_backends, backend_options, &
                                  dim_options)
  end subroutine create_from_comms_int

  subroutine create_from_group_common(group, tag, shape, names, mesh, ierr, backend, dim_backends, &
                                      backend_options, dim_options, host_aware)
    integer, intent(in) :: group
    character(len=*), intent(in) :: tag
    integer, intent(in) :: shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    logical, intent(in), optional :: host_aware
    integer(c_int), allocatable :: shp(:)
    type(c_strings), target :: cs, cb, cdb, cbo, cdo
    type(c_config) :: cfg
    type(c_ptr) :: out
    integer(c_int) :: st
    integer :: n
    n = max(size(shape), size(names))
    allocate(shp(max(n, 1)))
    shp = -1
    shp(1:size(shape)) = int(shape, c_int)
    call to_c_strings(names, n, cs)
    call options_config(cfg, cb, cdb, cbo, cdo, backend, dim_backends, backend_options, dim_options)
    if (present(host_aware)) cfg%host_aware = merge(1_c_int, 0_c_int, host_aware)
    out = mesh%ptr
    st = c_create_from_group_f(int(group, c_int), trim(tag) // c_null_char, int(n, c_int), shp, cs%ptr, cfg, out)
    if (st == DEVMESH_SUCCESS) mesh%ptr = out
    call finish(st, 'devmesh_create_from_group', ierr)
  end subroutine create_from_group_common

  subroutine create_from_group_f08(group, tag, shape, names, mesh, ierr, backend, dim_backends, backend_options, &
                                   dim_options, host_aware)
    type(MPI_Group), intent(in) :: group
    character(len=*), intent(in) :: tag
    integer, intent(in) :: shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    logical, intent(in), optional :: host_aware
    call create_from_group_common(group%MPI_VAL, tag, shape, names, mesh, ierr, backend, dim_backends, &
                                  backend_options, dim_options, host_aware)
  end subroutine create_from_group_f08

  subroutine create_from_group_int(group, tag, shape, names, mesh, ierr, backend, dim_backends, backend_options, &
                                   dim_options, host_aware)
    integer, intent(in) :: group
    character(len=*), intent(in) :: tag
    integer, intent(in) :: shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    logical, intent(in), optional :: host_aware
    call create_from_group_common(group, tag, shape, names, mesh, ierr, backend, dim_backends, backend_options, &
                                  dim_options, host_aware)
  end subroutine create_from_group_int

end module devmesh
