!> Fortran bindings of devmesh: an N-D mesh of MPI ranks (see devmesh.h).
!>
!> ISO_C_BINDING over the C API. gen_fortran_interface.py generates, at build
!> time, the module devmesh_c_interface (constants, bind(C) interfaces) from
!> the C headers, the procedures whose arguments map mechanically, and the
!> mpi_f08 twin of each `use mpi` procedure <x>_int here (devmesh_*.inc,
!> included below). This file holds what a C prototype cannot say.
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
!>   devmesh_broadcast, devmesh_alltoall, devmesh_barrier
!>                              collective over the caller's group along dim
!>   devmesh_agree, devmesh_shrink
!>                              collective over the surviving members of the
!>                              root (a fault-tolerant mesh)
!>   everything else            not collective (send, recv, isend, irecv and
!>                              sendrecv: between the ranks named)
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
  use mpi_f08, only: MPI_Comm, MPI_Group, MPI_COMM_NULL
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
    if (present(backend)) call to_c_name(backend, cb, cfg%backend)
    if (present(dim_backends)) call to_c_name(dim_backends, cdb, cfg%dim_backends)
    if (present(backend_options)) call to_c_name(backend_options, cbo, cfg%backend_options)
    if (present(dim_options)) call to_c_name(dim_options, cdo, cfg%dim_options)
  end subroutine new_config

  ! ---- creating --------------------------------------------------------------


  !> devmesh_create(comm, shape, names, mesh [, ierr]): a root mesh over all
  !> ranks of comm (a 0 in shape is chosen as MPI_Dims_create does).
  subroutine create_int(comm, shape, names, mesh, ierr)
    integer, intent(in) :: comm, shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    integer(c_int), allocatable :: shp(:)
    type(c_strings), target :: cs
    integer :: n
    call pad(shape, names, n, shp, cs)
    call finish(c_create_f(int(comm, c_int), int(n, c_int), shp, cs%ptr, mesh%ptr), 'devmesh_create', ierr)
  end subroutine create_int

  !> devmesh_create_from_ranks(comm, shape, ranks, names, mesh [, ierr]): over
  !> the listed ranks of comm (root index x is rank ranks(x+1)); ranks not
  !> listed get the null handle. devmesh_create_ex with ranks=.
  subroutine create_from_ranks_int(comm, shape, ranks, names, mesh, ierr)
    integer, intent(in) :: comm, shape(:), ranks(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    call create_ex_common('devmesh_create_from_ranks', comm, shape, names, mesh, ierr, .true., ranks)
  end subroutine create_from_ranks_int

  ! The rank list is passed when `listed` (not an optional argument:
  ! gfortran passes a zero-size array such as [integer ::] on as absent,
  ! which would turn an empty list into none); an empty list as nranks 0
  ! (the C layer refuses it) with a valid pointer. `proc` names the
  ! caller's procedure in messages.
  subroutine create_ex_common(proc, parent, shape, names, mesh, ierr, listed, ranks, backend, dim_backends, &
                              backend_options, dim_options, host_aware, comm_errors, fault_tolerance, deadline)
    character(len=*), intent(in) :: proc
    integer, intent(in) :: parent, shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    logical, intent(in) :: listed
    integer, intent(in) :: ranks(:)
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    logical, intent(in), optional :: host_aware, fault_tolerance
    integer, intent(in), optional :: comm_errors
    double precision, intent(in), optional :: deadline
    integer(c_int), allocatable :: shp(:)
    integer(c_int), allocatable, target :: rk(:)
    type(c_strings), target :: cs, cb, cdb, cbo, cdo
    type(c_config) :: cfg
    integer :: n
    call pad(shape, names, n, shp, cs)
    call new_config(cfg, cb, cdb, cbo, cdo, backend, dim_backends, backend_options, dim_options)
    if (listed) then
      allocate(rk(max(size(ranks), 1)))
      rk = 0
      rk(1:size(ranks)) = int(ranks, c_int)
      cfg%nranks = int(size(ranks), c_int)
      cfg%ranks = c_loc(rk)
    end if
    if (present(host_aware)) cfg%host_aware = merge(1_c_int, 0_c_int, host_aware)
    if (present(comm_errors)) cfg%comm_errors = int(comm_errors, c_int)
    if (present(fault_tolerance)) cfg%fault_tolerance = merge(1_c_int, 0_c_int, fault_tolerance)
    if (present(deadline)) cfg%deadline = real(deadline, c_double)
    call finish(c_create_ex_f(int(parent, c_int), int(n, c_int), shp, cs%ptr, cfg, mesh%ptr), proc, ierr)
  end subroutine create_ex_common

  !> devmesh_create_ex(comm, shape, names, mesh [, ierr] [, backend=] [, dim_backends=]
  !> [, backend_options=] [, dim_options=] [, ranks=] [, host_aware=] [, comm_errors=]
  !> [, fault_tolerance=] [, deadline=]):
  !> devmesh_create with the options of devmesh_config_t (devmesh.h); absent
  !> or blank: the default. ranks: as devmesh_create_from_ranks (gfortran
  !> passes a zero-size constant as absent: an empty list is refused only
  !> there); host_aware, fault_tolerance: logical; comm_errors:
  !> DEVMESH_COMM_ERRORS_*; deadline: seconds (double precision).
  subroutine create_ex_int(comm, shape, names, mesh, ierr, backend, dim_backends, backend_options, dim_options, &
                           ranks, host_aware, comm_errors, fault_tolerance, deadline)
    integer, intent(in) :: comm, shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    integer, intent(in), optional :: ranks(:), comm_errors
    logical, intent(in), optional :: host_aware, fault_tolerance
    double precision, intent(in), optional :: deadline
    if (present(ranks)) then
      call create_ex_common('devmesh_create_ex', comm, shape, names, mesh, ierr, .true., ranks, backend, &
                            dim_backends, backend_options, dim_options, host_aware, comm_errors, fault_tolerance, &
                            deadline)
    else
      call create_ex_common('devmesh_create_ex', comm, shape, names, mesh, ierr, .false., [integer ::], &
                            backend, dim_backends, backend_options, dim_options, host_aware, comm_errors, &
                            fault_tolerance, deadline)
    end if
  end subroutine create_ex_int

  !> devmesh_create_from_comms(parent, comms, names, mesh [, ierr] [, backend=]
  !> [, dim_backends=] [, backend_options=] [, dim_options=]): comms(i) is the
  !> caller's communicator of dim names(i) (non-members: MPI_COMM_NULL each).
  ! comms and names are padded as in pad (count mismatches fail in C).
  subroutine create_from_comms_int(parent, comms, names, mesh, ierr, backend, dim_backends, backend_options, &
                                   dim_options)
    integer, intent(in) :: parent, comms(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    integer(c_int), allocatable :: cc(:)
    type(c_strings), target :: cs, cb, cdb, cbo, cdo
    type(c_config) :: cfg
    integer :: n
    n = max(size(comms), size(names))
    allocate(cc(max(n, 1)))
    cc = int(MPI_COMM_NULL%MPI_VAL, c_int)
    cc(1:size(comms)) = int(comms, c_int)
    call to_c_strings(names, n, cs)
    call new_config(cfg, cb, cdb, cbo, cdo, backend, dim_backends, backend_options, dim_options)
    call finish(c_create_from_comms_f(int(parent, c_int), int(n, c_int), cc, cs%ptr, cfg, mesh%ptr), &
                'devmesh_create_from_comms', ierr)
  end subroutine create_from_comms_int

  !> devmesh_create_from_group(group, tag, shape, names, mesh [, ierr] [, backend=]
  !> [, dim_backends=] [, backend_options=] [, dim_options=] [, host_aware=]):
  !> MPI Sessions: a mesh over the members of group, who pass the same tag.
  subroutine create_from_group_int(group, tag, shape, names, mesh, ierr, backend, dim_backends, backend_options, &
                                   dim_options, host_aware)
    integer, intent(in) :: group, shape(:)
    character(len=*), intent(in) :: tag, names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    logical, intent(in), optional :: host_aware
    integer(c_int), allocatable :: shp(:)
    type(c_strings), target :: cs, ct, cb, cdb, cbo, cdo
    type(c_config) :: cfg
    integer :: n
    call pad(shape, names, n, shp, cs)
    call to_c_strings([tag], 1, ct)
    call new_config(cfg, cb, cdb, cbo, cdo, backend, dim_backends, backend_options, dim_options)
    if (present(host_aware)) cfg%host_aware = merge(1_c_int, 0_c_int, host_aware)
    call finish(c_create_from_group_f(int(group, c_int), ct%ptr(1), int(n, c_int), shp, cs%ptr, cfg, mesh%ptr), &
                'devmesh_create_from_group', ierr)
  end subroutine create_from_group_int

  !> devmesh_create_hosts(comm, mesh [, ierr] [, host_dim=] [, local_dim=]): the
  !> 2-D (host, local) mesh of comm (names absent or blank: 'host', 'local').
  subroutine create_hosts_int(comm, mesh, ierr, host_dim, local_dim)
    integer, intent(in) :: comm
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: host_dim, local_dim
    type(c_strings), target :: ch, cl
    type(c_ptr) :: hp, lp
    hp = c_null_ptr
    lp = c_null_ptr
    if (present(host_dim)) call to_c_name(host_dim, ch, hp)
    if (present(local_dim)) call to_c_name(local_dim, cl, lp)
    call finish(c_create_hosts_f(int(comm, c_int), hp, lp, mesh%ptr), 'devmesh_create_hosts', ierr)
  end subroutine create_hosts_int

  !> True for a handle that holds a mesh (false for the null handle).
  logical function devmesh_associated(mesh)
    type(devmesh_t), intent(in) :: mesh
    devmesh_associated = c_associated(mesh%ptr)
  end function devmesh_associated

  ! ---- views and names (not collective) -----------------------------------------

  !> A 1-D view of all dims of mesh; name absent or blank: the dim names
  !> joined with '_'. Pass out by keyword when name is omitted.
  subroutine devmesh_flatten(mesh, name, out, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in), optional :: name
    type(devmesh_t), intent(inout) :: out
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cname
    cname = c_null_ptr
    if (present(name)) call to_c_name(name, cs, cname)
    call finish(c_flatten(mesh%ptr, cname, out%ptr), 'devmesh_flatten', ierr)
  end subroutine devmesh_flatten

  !> Replaces dim by size(sizes) dims, split row-major; one size may be -1.
  subroutine devmesh_unflatten(mesh, dim, sizes, names, out, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim, names(:)
    integer, intent(in) :: sizes(:)
    type(devmesh_t), intent(inout) :: out
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs, cdim
    integer(c_int) :: s(max(size(sizes), 1))
    if (size(sizes) /= size(names)) then
      call fail_local(DEVMESH_ERR_INVALID_ARGUMENT, 'devmesh_unflatten: got ' // trim(itoa(size(sizes))) // &
                      ' sizes but ' // trim(itoa(size(names))) // ' names', ierr)
      return
    end if
    call to_c_strings([dim], 1, cdim)
    call to_c_strings(names, size(names), cs)
    s = 0
    s(1:size(sizes)) = int(sizes, c_int)
    call finish(c_unflatten(mesh%ptr, cdim%ptr(1), int(size(sizes), c_int), s, cs%ptr, out%ptr), &
                'devmesh_unflatten', ierr)
  end subroutine devmesh_unflatten

  !> devmesh_flatten_ex(mesh [, name], out [, ierr] [, backend=]
  !> [, backend_options=] [, dim_backends=] [, dim_options=]): devmesh_flatten
  !> whose new dim runs on a backend of its own (the options as
  !> devmesh_create_ex's, applied to the new dim).
  subroutine devmesh_flatten_ex(mesh, name, out, ierr, backend, backend_options, dim_backends, dim_options)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in), optional :: name
    type(devmesh_t), intent(inout) :: out
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, backend_options, dim_backends, dim_options
    type(c_strings), target :: cs, cb, cdb, cbo, cdo
    type(c_ptr) :: cname
    type(c_config) :: cfg
    cname = c_null_ptr
    if (present(name)) call to_c_name(name, cs, cname)
    call new_config(cfg, cb, cdb, cbo, cdo, backend, dim_backends, backend_options, dim_options)
    call finish(c_flatten_ex(mesh%ptr, cname, cfg, out%ptr), 'devmesh_flatten_ex', ierr)
  end subroutine devmesh_flatten_ex

  !> devmesh_unflatten_ex(mesh, dim, sizes, names, out [, ierr] [, backend=]
  !> [, backend_options=] [, dim_backends=] [, dim_options=]): devmesh_unflatten
  !> whose new dims run on backends of their own (dim_backends and
  !> dim_options by the new names).
  subroutine devmesh_unflatten_ex(mesh, dim, sizes, names, out, ierr, backend, backend_options, dim_backends, &
                                  dim_options)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim, names(:)
    integer, intent(in) :: sizes(:)
    type(devmesh_t), intent(inout) :: out
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, backend_options, dim_backends, dim_options
    type(c_strings), target :: cs, cdim, cb, cdb, cbo, cdo
    integer(c_int) :: s(max(size(sizes), 1))
    type(c_config) :: cfg
    if (size(sizes) /= size(names)) then
      call fail_local(DEVMESH_ERR_INVALID_ARGUMENT, 'devmesh_unflatten_ex: got ' // trim(itoa(size(sizes))) // &
                      ' sizes but ' // trim(itoa(size(names))) // ' names', ierr)
      return
    end if
    call to_c_strings([dim], 1, cdim)
    call to_c_strings(names, size(names), cs)
    s = 0
    s(1:size(sizes)) = int(sizes, c_int)
    call new_config(cfg, cb, cdb, cbo, cdo, backend, dim_backends, backend_options, dim_options)
    call finish(c_unflatten_ex(mesh%ptr, cdim%ptr(1), int(size(sizes), c_int), s, cs%ptr, cfg, out%ptr), &
                'devmesh_unflatten_ex', ierr)
  end subroutine devmesh_unflatten_ex

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

  ! ---- communicators -------------------------------------------------------------

  !> devmesh_cart_comm_periodic(mesh, periodic, comm [, ierr]): dim i
  !> periodic when periodic(i) (one per dim; size 0: none).
  subroutine cart_comm_periodic_int(mesh, periodic, comm, ierr)
    type(devmesh_t), intent(in) :: mesh
    logical, intent(in) :: periodic(:)
    integer, intent(inout) :: comm
    integer, intent(out), optional :: ierr
    integer(c_int) :: p(max(size(periodic), 1)), v, st
    p = 0
    where (periodic) p(1:size(periodic)) = 1
    st = c_cart_comm_periodic_f(mesh%ptr, int(size(periodic), c_int), p, v)
    if (st == DEVMESH_SUCCESS) comm = int(v)
    call finish(st, 'devmesh_cart_comm_periodic', ierr)
  end subroutine cart_comm_periodic_int

  !> Creates the communicators of every dim of mesh at once (path: one of
  !> DEVMESH_COMM_PATH_*, default automatic).
  subroutine devmesh_create_comms(mesh, path, ierr)
    type(devmesh_t), intent(in) :: mesh
    integer, intent(in), optional :: path
    integer, intent(out), optional :: ierr
    integer(c_int) :: p
    p = DEVMESH_COMM_PATH_AUTOMATIC
    if (present(path)) p = int(path, c_int)
    call finish(c_create_comms(mesh%ptr, p), 'devmesh_create_comms', ierr)
  end subroutine devmesh_create_comms

  !> The caller's communicator along dim in the dim's backend: handle is the
  !> C address of the backend's own handle (a C MPI_Comm for 'mpi', an
  !> ncclComm_t for 'nccl'), owned by devmesh; for an MPI handle in Fortran
  !> use devmesh_comm. backend: the backend the caller expects (absent or
  !> blank: any; another one than the dim's gives DEVMESH_ERR_INVALID_ARGUMENT).
  subroutine devmesh_backend_comm(mesh, dim, handle, ierr, backend)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(c_ptr), intent(inout) :: handle
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend
    type(c_strings), target :: cs, cb
    type(c_ptr) :: cdim, cback
    call to_c_name(dim, cs, cdim)
    cback = c_null_ptr
    if (present(backend)) call to_c_name(backend, cb, cback)
    call finish(c_backend_comm(mesh%ptr, cdim, cback, handle), 'devmesh_backend_comm', ierr)
  end subroutine devmesh_backend_comm

  !> devmesh_neighbors(mesh, dim, prev, next [, ierr] [, parent_prev=]
  !>                   [, parent_next=] [, periodic=] [, distance=])
  !> The caller's neighbours along dim, as MPI_Cart_shift(distance) gives
  !> them (default 1, any sign): 0-based local ranks k - distance (prev) and
  !> k + distance (next), wrapped when periodic (default .false.), else
  !> MPI_PROC_NULL at an open edge; and the same as parent ranks.
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
    if (present(periodic)) per = merge(1, 0, periodic)
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

  ! ---- requests, errors, version ---------------------------------------------------

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
    type(c_ptr) :: p(size(requests))
    integer(c_int) :: st
    p = requests(:)%ptr
    st = c_waitall(int(size(requests), c_int), p)
    requests(:)%ptr = p
    call finish(st, 'devmesh_waitall', ierr)
  end subroutine devmesh_waitall

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

  !> The library's version (of the shared object the program runs with).
  !> Each argument is optional.
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

end module devmesh
