! The Fortran module with `use mpi` (integer communicator handles) under
! mpiexec: the same generic calls take integers. Exits non-zero on failure.
program test_mpi
  use mpi
  use devmesh
  use, intrinsic :: iso_c_binding, only: c_associated
  implicit none
  type(devmesh_t) :: mesh, flat, bad, plugged
  integer :: nranks, me, failures, total, ierr, e, n, nt, k, comm, cart, r
  integer :: coord(2), cc(2), coord3(3)
  integer, allocatable :: g(:), a(:)

  call MPI_Init(e)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, e)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, e)
  failures = 0

  call devmesh_create(MPI_COMM_WORLD, [0, 0], ['a', 'b'], mesh, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'create')
  call devmesh_size(mesh, 'b', nt, ierr)
  call devmesh_coordinate(mesh, coord, ierr)
  allocate(g(nt), a(nt))
  call devmesh_group_ranks(mesh, 'b', g, ierr)
  call check(all(g == [(coord(1) * nt + k, k = 0, nt - 1)]), 'group of b')
  coord3 = -5
  call devmesh_coordinate(mesh, coord3(1:1), ierr)
  call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT .and. coord3(1) == -5, 'coordinate array too small')
  call check(index(devmesh_last_error(), 'maxdims is 1 but coord needs 2 entries') > 0, &
             'coordinate array too small: message names both counts')
  call devmesh_group_ranks(mesh, 'b', coord3(1:0), ierr)
  call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT .and. coord3(1) == -5, 'empty ranks array')
  call check(index(devmesh_last_error(), 'maxranks is 0 but ranks needs') > 0, 'empty ranks array: message')
  call devmesh_comm(mesh, 'b', comm, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'comm (integer handle)')
  call MPI_Allgather(me, 1, MPI_INTEGER, a, 1, MPI_INTEGER, comm, e)
  call check(all(a == g), 'allgather over b')

  call devmesh_cart_comm(mesh, cart, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'cart_comm (integer handle)')
  call MPI_Comm_rank(cart, r, e)
  call MPI_Cart_coords(cart, r, 2, cc, e)
  call check(all(cc == coord), 'Cartesian coordinates')

  call devmesh_flatten(mesh, 'ab', flat, ierr)
  call devmesh_comm(flat, 'ab', comm, ierr)
  call MPI_Allreduce(1, n, 1, MPI_INTEGER, MPI_SUM, comm, e)
  call check(n == nranks, 'flattened communicator holds everyone')

  ! An error: flatten into the name of a root dim of another layout (b is
  ! the smaller dim; at one rank it has the mesh's layout, and is b again).
  if (nranks > 1) then
    call devmesh_flatten(mesh, 'b', bad, ierr)
    call check(ierr == DEVMESH_ERR_DUPLICATE_NAME, 'flatten into a root dim name')
    call check(.not. devmesh_associated(bad), 'output untouched')
    call check(index(devmesh_last_error(), 'devmesh_flatten') > 0, 'message names the call')
  end if
  comm = -99
  call devmesh_comm(mesh, 'zz', comm, ierr)
  call check(ierr == DEVMESH_ERR_UNKNOWN_DIM .and. comm == -99, 'comm of an unknown dim')

  ! Options through the integer-handle procedure: tp on the example plugin;
  ! the load failures with their status on every rank, handle untouched.
  call devmesh_create_ex(MPI_COMM_WORLD, [0, 0], ['a', 'b'], plugged, ierr, dim_backends='b=example')
  call check(ierr == DEVMESH_SUCCESS, 'create_ex with b=example')
  if (ierr == DEVMESH_SUCCESS) then
    call devmesh_group_ranks(plugged, 'b', g, ierr)
    call devmesh_comm(plugged, 'b', comm, ierr)
    call MPI_Allgather(me, 1, MPI_INTEGER, a, 1, MPI_INTEGER, comm, e)
    call check(all(a == g) .and. all(g == [(coord(1) * nt + k, k = 0, nt - 1)]), 'allgather over b (plugin dim)')
  end if
  call devmesh_destroy(plugged)
  call create_fails('nosuch', DEVMESH_ERR_INVALID_ARGUMENT)
  call create_fails('empty', DEVMESH_ERR_UNSUPPORTED)
  call create_fails('abi99', DEVMESH_ERR_UNSUPPORTED)
  call create_fails('initfails', DEVMESH_ERR_UNSUPPORTED)
  call create_fails('missingdep', DEVMESH_ERR_UNSUPPORTED)

  call parity_checks()

  call devmesh_create_comms(mesh, DEVMESH_COMM_PATH_SPLIT, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'create_comms')
  call devmesh_destroy(flat, ierr)
  call devmesh_destroy(mesh, ierr)

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, e)
  if (me == 0) write(*, '(a, i0, a, i0, a)') 'test_mpi on ', nranks, ' ranks: ', total, ' failures'
  call MPI_Finalize(e)
  if (total /= 0) error stop 1

contains

  subroutine create_fails(name, want)
    character(len=*), intent(in) :: name
    integer, intent(in) :: want
    type(devmesh_t) :: h
    integer :: st
    h = mesh
    call devmesh_create_ex(MPI_COMM_WORLD, [0, 0], ['a', 'b'], h, st, dim_backends='b=' // name)
    call check(st == want, 'dim backend ' // name // ': status')
    call check(index(devmesh_last_error(), name) > 0, 'dim backend ' // name // ': message')
    call check(c_associated(h%ptr, mesh%ptr), 'dim backend ' // name // ': handle untouched')
  end subroutine create_fails

  ! The procedures that mirror the rest of the C API, with integer
  ! handles: shape, root size, parent rank and all groups against the
  ! row-major reference; the host mesh against MPI_Comm_split_type; the
  ! error handler of comm_errors= against MPI's; the version against the
  ! one meson built (argument 1).
  subroutine parity_checks()
    type(devmesh_t) :: hosts_mesh, ret
    integer :: shp(2), v, st, i, j, nd, shared, ns, c, eh, vmaj, vmin, vpat
    integer, allocatable :: members(:), got(:)
    logical :: within
    character(len=32) :: arg, text
    character(len=:), allocatable :: bname
    nd = nranks / nt
    shp = -5
    call devmesh_shape(mesh, shp, st)
    call check(st == DEVMESH_SUCCESS .and. all(shp == [nd, nt]), 'shape')
    call devmesh_root_size(flat, v, st)
    call check(st == DEVMESH_SUCCESS .and. v == nranks, 'root size')
    call devmesh_parent_rank(mesh, v, st)
    call check(st == DEVMESH_SUCCESS .and. v == me, 'parent rank')
    allocate(got(nranks))
    call devmesh_all_groups(mesh, 'a', got, st)
    call check(st == DEVMESH_SUCCESS .and. all(got == [((i * nt + j, i = 0, nd - 1), j = 0, nt - 1)]), &
               'all groups of a')
    call devmesh_dim_backend(mesh, 'a', bname, st)
    call check(st == DEVMESH_SUCCESS .and. bname == 'mpi', 'dim_backend')

    call devmesh_create_hosts(MPI_COMM_WORLD, hosts_mesh, st, local_dim='core')
    call check(st == DEVMESH_SUCCESS, 'create_hosts (integer handle)')
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, shared, e)
    call MPI_Comm_size(shared, ns, e)
    allocate(members(ns))
    call MPI_Allgather(me, 1, MPI_INTEGER, members, 1, MPI_INTEGER, shared, e)
    call MPI_Comm_free(shared, e)
    deallocate(g)
    allocate(g(ns))
    g = -1
    call devmesh_group_ranks(hosts_mesh, 'core', g, st)
    call check(st == DEVMESH_SUCCESS .and. all(g == members), 'core is the shared-memory group')
    call devmesh_dim_within_hosts(hosts_mesh, 'core', within, st)
    call check(st == DEVMESH_SUCCESS .and. within, 'core within hosts')
    call devmesh_destroy(hosts_mesh)

    call devmesh_create_ex(MPI_COMM_WORLD, [0, 0], ['a', 'b'], ret, st, comm_errors=DEVMESH_COMM_ERRORS_RETURN)
    call check(st == DEVMESH_SUCCESS, 'create_ex with comm_errors (integer handle)')
    call devmesh_cart_comm(ret, c, st)
    call MPI_Comm_get_errhandler(c, eh, e)
    call check(eh == MPI_ERRORS_RETURN, 'cart communicator returns errors')
    call MPI_Errhandler_free(eh, e)
    call devmesh_destroy(ret)

    call get_command_argument(1, arg)
    call devmesh_version(vmaj, vmin, vpat, st)
    write(text, '(i0, a, i0, a, i0)') vmaj, '.', vmin, '.', vpat
    call check(st == DEVMESH_SUCCESS .and. trim(text) == trim(arg), 'version ' // trim(text) // ' is ' // trim(arg))
  end subroutine parity_checks

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      write(*, '(a, i0, a, a, a, a)') 'rank ', me, ': FAILED ', what, ' / last error: ', devmesh_last_error()
    end if
  end subroutine check
end program test_mpi
