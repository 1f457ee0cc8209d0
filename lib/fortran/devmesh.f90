!> Fortran bindings of devmesh: an N-D mesh of MPI ranks (see devmesh.h).
!>
!> ISO_C_BINDING over the C API. gen_fortran_interface.py generates, at build
!> time, the module devmesh_c_interface (constants, bind(C) interfaces) from
!> the C headers, the procedures whose arguments map mechanically, and the
!> mpi_f08 twin of each `use mpi` procedure <x>_int here (devmesh_*.inc,
!> included below). This file, with the parts it includes after `contains`
!> (devmesh_create.f90, devmesh_views.f90, devmesh_requests.f90,
!> devmesh_repair.f90), holds what a C prototype cannot say.
!> Types and kinds (type(devmesh_t), type(devmesh_request_t); element counts
!> default INTEGER or INTEGER(int64), e.g. size(x, kind=8); every other
!> number default INTEGER) and conventions (ierr, handles, strings, ranks
!> and positions, arrays, buffers): docs/FORTRAN.md.
!>
!> Collectiveness, as each C function's comment states it (the generated
!> interfaces repeat that line; tests/docs/check_collectiveness.py checks
!> this summary against them):
!>   devmesh_create*            collective over the parent communicator
!>                              (devmesh_create_from_group: the group's
!>                              members; devmesh_create_comms: all members
!>                              of the root)
!>   devmesh_comm, devmesh_backend_comm, devmesh_all_groups_comm
!>                              collective over the caller's group along dim
!>                              the first time that layout is asked for on
!>                              the root; not collective afterwards
!>   devmesh_cart_comm*         collective over the caller's group of the
!>                              flattened view the first time
!>   devmesh_allreduce, devmesh_allgather, devmesh_reduce_scatter,
!>   devmesh_broadcast, devmesh_alltoall, devmesh_barrier,
!>   devmesh_alltoallv, devmesh_allgatherv, devmesh_reduce_scatterv,
!>   devmesh_gather, devmesh_gatherv, devmesh_scatter, devmesh_scatterv,
!>   devmesh_reduce, devmesh_iallreduce, devmesh_iallgather,
!>   devmesh_ireduce_scatter, devmesh_ibroadcast, devmesh_ialltoall,
!>   devmesh_ibarrier, devmesh_ialltoallv, devmesh_iallgatherv,
!>   devmesh_ireduce_scatterv, devmesh_igather, devmesh_igatherv,
!>   devmesh_iscatter, devmesh_iscatterv, devmesh_ireduce
!>                              collective over the caller's group along dim
!>   devmesh_agree, devmesh_shrink
!>                              collective over the surviving members of the
!>                              root (a fault-tolerant mesh)
!>   devmesh_repair, devmesh_repair_ex
!>                              collective over the surviving members of the
!>                              root, its spares in standby and the
!>                              processes the repair spawns
!>   devmesh_release_spares     collective over the surviving members of the
!>                              root and its spares in standby
!>   devmesh_standby            collective over the spares' pool
!>   devmesh_join               collective over the repair that spawned the
!>                              process
!>   everything else            not collective (send, recv, isend, irecv,
!>                              sendrecv and batch: between the ranks named)
!>
!> The module is compiled by the compiler that built devmesh (module files are
!> compiler-specific) against one MPI's mpi_f08 module: programs need that
!> compiler and that MPI (DEVMESH_MPI_FAMILY, DEVMESH_MPI_LIBRARY; its
!> wrapper: pkg-config --variable=mpifort devmesh-fortran). Link with
!> -ldevmesh_fortran -ldevmesh (pkg-config devmesh-fortran, or CMake's
!> devmesh::fortran).
module devmesh
  use, intrinsic :: iso_c_binding, only: c_int, c_char, c_ptr, c_null_ptr, c_null_char, &
                                         c_loc, c_associated, c_f_pointer, c_size_t, c_sizeof, c_double
  use, intrinsic :: iso_fortran_env, only: error_unit, int64
  use mpi_f08, only: MPI_Comm, MPI_Group, MPI_Info, MPI_COMM_NULL
  use devmesh_c_interface
  implicit none
  private
  include 'devmesh_public.inc'
  include 'devmesh_mpi.inc'

  !> A handle to one view of a mesh; the null handle (ptr = c_null_ptr) is
  !> "no mesh", what ranks outside a rank list get. `ptr` is the C API's
  !> devmesh_t, for mixing with C code.
  type, public :: devmesh_t
    type(c_ptr) :: ptr = c_null_ptr
  end type devmesh_t

  !> A pending devmesh_isend/devmesh_irecv; the null request (ptr =
  !> c_null_ptr, DEVMESH_REQUEST_NULL in C) is complete. `ptr` is the C
  !> API's devmesh_request_t.
  type, public :: devmesh_request_t
    type(c_ptr) :: ptr = c_null_ptr
  end type devmesh_request_t

  public :: devmesh_associated, devmesh_flatten, devmesh_unflatten, devmesh_flatten_ex, devmesh_unflatten_ex
  public :: devmesh_dim_name, devmesh_create_comms, devmesh_neighbors
  public :: devmesh_backend_comm, devmesh_version
  public :: devmesh_last_error, devmesh_status_string, devmesh_test, devmesh_waitall
  public :: devmesh_batch, devmesh_p2p
  public :: devmesh_repair

  !> One send or receive of devmesh_batch, devmesh_p2p_t of devmesh.h field
  !> for field (make it with devmesh_p2p): send nonzero sends buffer to
  !> peer, 0 receives into it; peer a 0-based local rank or MPI_PROC_NULL;
  !> buffer the address of count elements of datatype.
  type, bind(C), public :: devmesh_p2p_t
    integer(c_int) :: send = 0
    integer(c_int) :: peer = 0
    type(c_ptr) :: buffer = c_null_ptr
    integer(c_size_t) :: count = 0
    integer(c_int) :: datatype = 0
  end type devmesh_p2p_t

  ! An entry of devmesh_batch, with a count of either kind.
  interface devmesh_p2p
    module procedure p2p_count_default, p2p_count_int64
  end interface devmesh_p2p


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

  ! A negative element count, of either kind the collectives take.
  interface bad_count
    module procedure bad_count_default, bad_count_int64
  end interface bad_count

  ! A count or displacement array of either kind that is neither empty nor
  ! of the group's size, or holds a negative entry.
  interface bad_counts
    module procedure bad_counts_default, bad_counts_int64
  end interface bad_counts

contains

  include 'devmesh_wrappers.inc'

  ! ---- helpers ---------------------------------------------------------------

  ! NUL-terminated copies of names(1:n) without trailing blanks; entries
  ! past size(names) are empty strings. cs must be a TARGET in the caller.
  subroutine to_c_strings(names, n, cs)
    character(len=*), intent(in) :: names(:)
    integer, intent(in) :: n
    type(c_strings), intent(inout), target :: cs
    integer :: i, j, total, at, l
    total = n
    do i = 1, min(n, size(names))
      total = total + len_trim(names(i))
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
    p = c_null_ptr
    if (len_trim(name) == 0) return
    call to_c_strings([name], 1, cs)
    p = cs%ptr(1)
  end subroutine to_c_name

  ! A copy of a NUL-terminated C string ('' for c_null_ptr).
  function from_c_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i
    n = 0
    if (c_associated(p)) n = int(c_strlen(p))
    allocate(character(len=n) :: s)
    if (n > 0) call c_f_pointer(p, chars, [n])
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function from_c_string

  ! Hands a status to the caller: into ierr, or, without ierr, a failure
  ! stops the program with the message. The C message starts with the C
  ! function that failed ("devmesh_create_ex: ..."); a Fortran caller is
  ! told the procedure it called instead (proc, e.g. 'devmesh_create').
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
      call fail_local(int(status), proc // ': ' // text, ierr)
    else
      call deliver(int(status), ierr)
    end if
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

  ! The address of a buffer argument.
  function addr(buf) result(p)
    type(*), dimension(..), intent(in), target, contiguous :: buf
    type(c_ptr) :: p
    p = c_loc(buf)
  end function addr

  ! The stream, or c_null_ptr when absent.
  function stream_arg(stream) result(p)
    type(c_ptr), intent(in), optional :: stream
    type(c_ptr) :: p
    p = c_null_ptr
    if (present(stream)) p = stream
  end function stream_arg

  logical function bad_count_default(count, ierr)
    integer, intent(in) :: count
    integer, intent(out), optional :: ierr
    bad_count_default = bad_count_int64(int(count, int64), ierr)
  end function bad_count_default

  logical function bad_count_int64(count, ierr)
    integer(int64), intent(in) :: count
    integer, intent(out), optional :: ierr
    character(len=21) :: text
    bad_count_int64 = count < 0
    if (.not. bad_count_int64) return
    write(text, '(i0)') count
    call fail_local(DEVMESH_ERR_INVALID_ARGUMENT, 'negative count ' // trim(text), ierr)
  end function bad_count_int64

  ! The size of the caller's group along dim (a C string or c_null_ptr);
  ! true (the failure delivered) when it cannot be known.
  logical function no_group(mesh, dim, n, proc, ierr)
    type(devmesh_t), intent(in) :: mesh
    type(c_ptr), intent(in) :: dim
    integer(c_int), intent(out) :: n
    character(len=*), intent(in) :: proc
    integer, intent(out), optional :: ierr
    integer(c_int) :: st
    n = 0
    st = c_size(mesh%ptr, dim, n)
    no_group = st /= DEVMESH_SUCCESS
    if (no_group) call finish(st, proc, ierr)
  end function no_group

  logical function bad_counts_default(x, n, what, ierr)
    integer, intent(in) :: x(:)
    integer(c_int), intent(in) :: n
    character(len=*), intent(in) :: what
    integer, intent(out), optional :: ierr
    bad_counts_default = bad_counts_int64(int(x, int64), n, what, ierr)
  end function bad_counts_default

  logical function bad_counts_int64(x, n, what, ierr)
    integer(int64), intent(in) :: x(:)
    integer(c_int), intent(in) :: n
    character(len=*), intent(in) :: what
    integer, intent(out), optional :: ierr
    character(len=21) :: text
    integer :: i
    bad_counts_int64 = .true.
    if (size(x) /= 0 .and. size(x) /= n) then
      call fail_local(DEVMESH_ERR_INVALID_ARGUMENT, what // ' has ' // trim(itoa(size(x))) // &
                      ' entries, the group along dim ' // trim(itoa(int(n))), ierr)
      return
    end if
    do i = 1, size(x)
      if (x(i) < 0) then
        write(text, '(i0)') x(i)
        call fail_local(DEVMESH_ERR_INVALID_ARGUMENT, 'negative entry ' // trim(text) // ' in ' // what // &
                        '(' // trim(itoa(i)) // ')', ierr)
        return
      end if
    end do
    bad_counts_int64 = .false.
  end function bad_counts_int64

  ! 0-based offsets of blocks of counts laid out one after another.
  function packed(counts) result(displs)
    integer(int64), intent(in) :: counts(:)
    integer(int64) :: displs(size(counts))
    integer :: i
    if (size(counts) > 0) displs(1) = 0
    do i = 2, size(counts)
      displs(i) = displs(i - 1) + counts(i - 1)
    end do
  end function packed

  ! A block (counts(i) > 0 elements at 0-based displs(i)) passing the end of
  ! a buffer of n elements; counts and displs non-negative (bad_counts).
  ! Arrays not given (empty) are left to the C call.
  logical function bad_extent(n, counts, displs, what, ierr)
    integer(int64), intent(in) :: n, counts(:), displs(:)
    character(len=*), intent(in) :: what
    integer, intent(out), optional :: ierr
    character(len=21) :: a, b, c
    integer :: i
    bad_extent = .false.
    if (size(counts) == 0 .or. size(displs) /= size(counts)) return
    do i = 1, size(counts)
      if (counts(i) > 0 .and. (counts(i) > n .or. displs(i) > n - counts(i))) then
        write(a, '(i0)') displs(i)
        write(b, '(i0)') counts(i)
        write(c, '(i0)') n
        call fail_local(DEVMESH_ERR_INVALID_ARGUMENT, 'block ' // trim(itoa(i)) // ' (' // trim(b) // &
                        ' elements at ' // trim(a) // ') passes the end of ' // what // ' (' // trim(c) // &
                        ' elements)', ierr)
        bad_extent = .true.
        return
      end if
    end do
  end function bad_extent

  ! shape and names of different lengths are passed padded (a negative size,
  ! an empty name) so that the collective still runs and fails everywhere.
  subroutine pad(shape, names, n, shp, cs)
    integer, intent(in) :: shape(:)
    character(len=*), intent(in) :: names(:)
    integer, intent(out) :: n
    integer(c_int), allocatable, intent(out) :: shp(:)
    type(c_strings), intent(inout), target :: cs
    n = max(size(shape), size(names))
    allocate(shp(max(n, 1)))
    shp = -1
    shp(1:size(shape)) = int(shape, c_int)
    call to_c_strings(names, n, cs)
  end subroutine pad

  ! A devmesh_config_t with the backend options (absent or blank: unset);
  ! the option strings live in cb.. until the caller's call returns.
  subroutine new_config(cfg, cb, cdb, cbo, cdo, backend, dim_backends, backend_options, dim_options)
    type(c_config), intent(out) :: cfg
    type(c_strings), intent(inout), target :: cb, cdb, cbo, cdo
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    cfg%size = c_sizeof(cfg)
    cfg%magic = DEVMESH_CONFIG_MAGIC
    cfg%version = DEVMESH_VERSION_CODE
    cfg%nranks = DEVMESH_CONFIG_UNSET
    cfg%host_aware = DEVMESH_CONFIG_UNSET
    cfg%comm_errors = DEVMESH_CONFIG_UNSET
    cfg%fault_tolerance = DEVMESH_CONFIG_UNSET
    cfg%deadline = 0.0_c_double
    cfg%spares = DEVMESH_CONFIG_UNSET
    if (present(backend)) call to_c_name(backend, cb, cfg%backend)
    if (present(dim_backends)) call to_c_name(dim_backends, cdb, cfg%dim_backends)
    if (present(backend_options)) call to_c_name(backend_options, cbo, cfg%backend_options)
    if (present(dim_options)) call to_c_name(dim_options, cdo, cfg%dim_options)
  end subroutine new_config

  include 'devmesh_create.f90'

  include 'devmesh_views.f90'

  include 'devmesh_requests.f90'

  include 'devmesh_repair.f90'

end module devmesh
