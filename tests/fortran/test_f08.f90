! The Fortran module with mpi_f08 under mpiexec (1, 3, 8 ranks): groups of
! a 2-D mesh, its flatten, slice and unflatten against a row-major reference
! and real communicators; error paths with outputs left untouched. Exits
! non-zero (error stop) when a check fails on any rank.
program test_f08
  use mpi_f08
  use devmesh
  use, intrinsic :: iso_c_binding, only: c_int, c_ptr, c_char, c_size_t, c_null_char, c_associated, c_f_pointer, &
                                         c_null_ptr
  implicit none
  type(devmesh_t) :: mesh, flat, sub, unflat, bad, listed, plugged, probe, aware, tpv, dpv, cat
  type(MPI_Comm) :: comm
  integer :: nranks, me, failures, total, ierr, nd, nt, n, i, k, lr
  integer :: coord(2), dims(2)
  character(len=64) :: want
  integer :: wide(3)
  integer, allocatable :: expect(:), ranks(:)
  character(len=:), allocatable :: name

  interface
    integer(c_int) function c_setenv(name, value, overwrite) bind(C, name='setenv')
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*), value(*)
      integer(c_int), value :: overwrite
    end function c_setenv
    integer(c_int) function c_unsetenv(name) bind(C, name='unsetenv')
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
    end function c_unsetenv
  end interface

  call MPI_Init()
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  failures = 0

  ! Root (dp, tp) with both sizes inferred; names with trailing blanks.
  call devmesh_create(MPI_COMM_WORLD, [0, 0], [character(len=16) :: 'dp', 'tp'], mesh, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'create')
  call check(devmesh_associated(mesh), 'create gives a handle')
  dims = 0
  call MPI_Dims_create(nranks, 2, dims)
  call devmesh_size(mesh, 'dp', nd, ierr)
  call devmesh_size(mesh, 'tp', nt, ierr)
  call check(nd == dims(1) .and. nt == dims(2), 'inferred sizes')
  call devmesh_size(mesh, '', n, ierr)
  call check(n == nranks, 'size of the whole view')
  call devmesh_coordinate(mesh, coord, ierr)
  call check(all(coord == [me / nt, mod(me, nt)]), 'coordinate (0-based)')
  wide = -5
  call devmesh_coordinate(mesh, wide, ierr)
  call check(ierr == DEVMESH_SUCCESS .and. all(wide == [coord, -5]), 'coordinate: entries past ndim untouched')
  call devmesh_coordinate(mesh, wide(1:1), ierr)
  call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT .and. wide(1) == coord(1), 'coordinate array too small')
  call check(index(devmesh_last_error(), 'maxdims is 1 but coord needs 2 entries') > 0, &
             'coordinate array too small: message names both counts')
  call devmesh_dim_name(mesh, 2, name, ierr)
  call check(name == 'tp', 'dim_name(2)')

  ! tp: [row*nt + k]; dp: [k*nt + col]
  allocate(expect(nt))
  expect = [(coord(1) * nt + k, k = 0, nt - 1)]
  call check_dim(mesh, 'tp', expect)
  deallocate(expect)
  allocate(expect(nd))
  expect = [(k * nt + coord(2), k = 0, nd - 1)]
  call check_dim(mesh, 'dp', expect)
  call devmesh_local_rank(mesh, 'dp', lr, ierr)
  call check(lr == coord(1), 'local rank along dp')

  ! flatten (default name dp_tp): everyone, in rank order.
  call devmesh_flatten(mesh, out=flat, ierr=ierr)
  call check(ierr == DEVMESH_SUCCESS, 'flatten')
  call devmesh_dim_name(flat, 1, name, ierr)
  call check(name == 'dp_tp', 'default flatten name')
  deallocate(expect)
  allocate(expect(nranks))
  expect = [(k, k = 0, nranks - 1)]
  call check_dim(flat, 'dp_tp', expect)
  call check_dim(flat, '', expect)          ! blank: the only dim

  ! slice transposed, then unflatten the flat dim back to (x, y) = (dp, tp)
  call devmesh_slice(mesh, ['tp', 'dp'], sub, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'slice')
  call devmesh_dim_name(sub, 1, name, ierr)
  call check(name == 'tp', 'slice keeps the order given')
  call devmesh_unflatten(flat, 'dp_tp', [nd, nt], ['x', 'y'], unflat, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'unflatten')
  deallocate(expect)
  allocate(expect(nt))
  call devmesh_group_ranks(mesh, 'tp', expect, ierr)
  call check_dim(unflat, 'y', expect)
  call check_dim(sub, 'tp', expect)

  ! concatenate the dp slice after the tp slice: (tp, dp) again, same groups
  call devmesh_slice(mesh, ['tp'], tpv, ierr)
  call devmesh_slice(mesh, ['dp'], dpv, ierr)
  call devmesh_concatenate([tpv, dpv], cat, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'concatenate')
  call devmesh_dim_name(cat, 2, name, ierr)
  call check(name == 'dp', 'concatenate keeps the order given')
  call check_dim(cat, 'tp', expect)
  deallocate(expect)
  allocate(expect(nd))
  expect = [(k * nt + coord(2), k = 0, nd - 1)]
  call check_dim(cat, 'dp', expect)
  call devmesh_concatenate([tpv, tpv], bad, ierr)
  call check(ierr == DEVMESH_ERR_DUPLICATE_NAME, 'concatenate a dim twice')
  call check(.not. devmesh_associated(bad), 'concatenate output untouched')
  if (nranks > 1) then
    call devmesh_concatenate([flat, dpv], bad, ierr)
    call check(ierr == DEVMESH_ERR_OVERLAP, 'concatenate overlapping dims')
    call check(index(devmesh_last_error(), 'devmesh_concatenate') > 0, 'message names the procedure')
  end if
  call devmesh_destroy(tpv)
  call devmesh_destroy(dpv)
  call devmesh_destroy(cat)

  ! Errors: exact status, outputs untouched, a message naming the problem.
  n = -7
  call devmesh_size(mesh, 'nope', n, ierr)
  call check(ierr == DEVMESH_ERR_UNKNOWN_DIM, 'unknown dim status')
  call check(n == -7, 'size untouched on error')
  call check(index(devmesh_last_error(), "'nope'") > 0, 'message names the dim')
  call devmesh_slice(mesh, ['dp', 'dp'], bad, ierr)
  call check(ierr == DEVMESH_ERR_DUPLICATE_NAME, 'slice twice')
  call check(.not. devmesh_associated(bad), 'slice output untouched')
  call devmesh_unflatten(mesh, 'dp', [nd, 1], ['a'], bad, ierr)
  call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT, 'unflatten sizes/names count')
  call check(index(devmesh_last_error(), '2 sizes but 1 names') > 0, 'local message')
  call devmesh_unflatten(mesh, 'dp', [0, nd], ['a', 'b'], bad, ierr)
  call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT, 'unflatten size 0')
  call devmesh_create(MPI_COMM_WORLD, [nranks + 1], ['z'], bad, ierr)
  call check(ierr == DEVMESH_ERR_SHAPE_MISMATCH, 'create shape mismatch')
  call check(.not. devmesh_associated(bad), 'create output untouched')
  call devmesh_create(MPI_COMM_WORLD, [nranks], ['a', 'b'], bad, ierr)
  call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT, 'create names/shape count')
  if (nranks > 1) then
    call devmesh_create(MPI_COMM_WORLD, [nranks], [merge('p', 'q', me == 0)], bad, ierr)
    call check(ierr == DEVMESH_ERR_INCONSISTENT, 'inconsistent on every rank')
  end if
  if (nt > 1) then
    deallocate(expect)
    allocate(expect(1))
    expect = -3
    call devmesh_group_ranks(mesh, 'tp', expect, ierr)
    call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT .and. expect(1) == -3, 'ranks array too small')
    write(want, '(a, i0, a)') 'maxranks is 1 but ranks needs ', nt, ' entries'
    call check(index(devmesh_last_error(), trim(want)) > 0, 'ranks array too small: message names both counts')
  end if
  call check(devmesh_status_string(DEVMESH_ERR_OVERLAP) == 'overlapping dims', 'status string')

  ! Options: tp on the example plugin (found through DEVMESH_BACKEND_PATH),
  ! dp on MPI; each dim's backend as the C API reports it.
  call devmesh_create_ex(MPI_COMM_WORLD, [0, 0], ['dp', 'tp'], plugged, ierr, dim_backends='tp=example')
  call check(ierr == DEVMESH_SUCCESS, 'create_ex with tp=example')
  if (ierr == DEVMESH_SUCCESS) then
    call check(dim_backend(plugged, 'tp') == 'example', 'tp runs on the example plugin')
    call check(dim_backend(plugged, 'dp') == 'mpi', 'dp stays on mpi')
    call check_dim(plugged, 'tp', [(coord(1) * nt + k, k = 0, nt - 1)])
    ! A flattened or unflattened dim gets its backend where it is made.
    call devmesh_flatten_ex(plugged, 'both', probe, ierr, backend='example')
    call check(ierr == DEVMESH_SUCCESS, 'flatten_ex with backend example')
    if (ierr == DEVMESH_SUCCESS) call check(dim_backend(probe, 'both') == 'example', 'both runs on example')
    call devmesh_destroy(probe)
    call devmesh_unflatten_ex(plugged, 'dp', [1, -1], ['d1', 'd2'], probe, ierr, dim_backends='d2=example')
    call check(ierr == DEVMESH_SUCCESS, 'unflatten_ex with d2=example')
    if (ierr == DEVMESH_SUCCESS) then
      call check(dim_backend(probe, 'd2') == 'example', 'd2 runs on example')
      call check(dim_backend(probe, 'd1') == 'mpi', 'd1 stays on mpi')
    end if
    call devmesh_destroy(probe)
  end if
  call devmesh_destroy(plugged)
  ! dim_backends name dims of the mesh: a typo is UNKNOWN_DIM.
  probe = mesh
  call devmesh_create_ex(MPI_COMM_WORLD, [0, 0], ['dp', 'tp'], probe, ierr, dim_backends='Tp=example')
  call check(ierr == DEVMESH_ERR_UNKNOWN_DIM .and. c_associated(probe%ptr, mesh%ptr), &
             'dim_backends naming no dim of the mesh')
  call check(index(devmesh_last_error(), "dim_backends 'Tp' names no dim") > 0, 'unknown dim_backends: message')
  ! Load failures: the same status on every rank (each rank checks its own,
  ! the failures are summed at the end), the handle untouched.
  call create_fails('nosuch', DEVMESH_ERR_INVALID_ARGUMENT, 'backend nosuch')
  call create_fails('empty', DEVMESH_ERR_UNSUPPORTED, 'backend empty (no symbol)')
  call create_fails('abi99', DEVMESH_ERR_UNSUPPORTED, 'backend abi99 (too new)')
  call create_fails('initfails', DEVMESH_ERR_UNSUPPORTED, 'backend initfails')
  call create_fails('missingdep', DEVMESH_ERR_UNSUPPORTED, 'backend missingdep')
  probe = mesh
  call devmesh_create_ex(MPI_COMM_WORLD, [0, 0], ['dp', 'tp'], probe, ierr, dim_backends='tp')
  call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT .and. c_associated(probe%ptr, mesh%ptr), &
             'malformed dim_backends')

  ! A rank list: every rank but the last, reversed; the last is no member.
  k = max(nranks - 1, 1)
  allocate(ranks(k))
  ranks = [(k - 1 - i, i = 0, k - 1)]
  call devmesh_create_from_ranks(MPI_COMM_WORLD, [0], ranks, ['x'], listed, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'create_from_ranks')
  if (me < k) then
    call check_dim(listed, 'x', ranks)
  else
    call check(.not. devmesh_associated(listed), 'non-member gets the null handle')
  end if

  call devmesh_destroy(listed, ierr)
  ! The same list through devmesh_create_ex, which takes backends with it.
  call devmesh_create_ex(MPI_COMM_WORLD, [0], ['x'], listed, ierr, ranks=ranks, backend='example')
  call check(ierr == DEVMESH_SUCCESS, 'create_ex with ranks and a backend')
  if (me < k) then
    call check(dim_backend(listed, 'x') == 'example', 'the listed mesh runs on the example plugin')
    call check_dim(listed, 'x', ranks)
  else
    call check(.not. devmesh_associated(listed), 'create_ex: non-member gets the null handle')
  end if
  call devmesh_destroy(listed, ierr)

  ! Host-aware ordering with two hosts simulated round robin
  ! (DEVMESH_HOST_ID): tp is the caller's host, in rank order.
  if (mod(nranks, 2) == 0) then
    call check(c_setenv('DEVMESH_HOST_ID' // c_null_char, &
                        merge('even', 'odd_', mod(me, 2) == 0) // c_null_char, 1_c_int) == 0, 'setenv')
    call devmesh_create_ex(MPI_COMM_WORLD, [2, 0], ['dp', 'tp'], aware, ierr, host_aware=.true.)
    call check(ierr == DEVMESH_SUCCESS, 'create_ex with host_aware')
    if (ierr == DEVMESH_SUCCESS) call check_dim(aware, 'tp', [(mod(me, 2) + 2 * i, i = 0, nranks / 2 - 1)])
    call devmesh_destroy(aware, ierr)
    call check(c_unsetenv('DEVMESH_HOST_ID' // c_null_char) == 0, 'unsetenv')
  end if

  call parity_checks()

  call devmesh_destroy(mesh, ierr)   ! the root first: views stay valid
  call check(.not. devmesh_associated(mesh), 'destroy nulls the handle')
  call devmesh_comm(flat, 'dp_tp', comm, ierr)
  call MPI_Allreduce(1, n, 1, MPI_INTEGER, MPI_SUM, comm)
  call check(n == nranks, 'a view outlives the root handle')
  call devmesh_destroy(flat)
  call devmesh_destroy(sub)
  call devmesh_destroy(unflat)
  call devmesh_destroy(bad)           ! null handle: fine

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) write(*, '(a, i0, a, i0, a)') 'test_f08 on ', nranks, ' ranks: ', total, ' failures'
  call MPI_Finalize()
  if (total /= 0) error stop 1

contains

  ! devmesh_create_ex with backend `name` must fail with `want` and leave
  ! the handle as it was.
  subroutine create_fails(name, want, what)
    character(len=*), intent(in) :: name, what
    integer, intent(in) :: want
    type(devmesh_t) :: h
    integer :: e
    h = mesh
    call devmesh_create_ex(MPI_COMM_WORLD, [0, 0], ['dp', 'tp'], h, e, backend=name)
    call check(e == want, what // ': status')
    call check(index(devmesh_last_error(), name) > 0, what // ': message names the backend')
    call check(c_associated(h%ptr, mesh%ptr), what // ': handle untouched')
  end subroutine create_fails

  ! devmesh_dim_backend's name, '?' when it fails.
  function dim_backend(m, dim) result(name)
    type(devmesh_t), intent(in) :: m
    character(len=*), intent(in) :: dim
    character(len=:), allocatable :: name
    integer :: e
    name = '?'
    call devmesh_dim_backend(m, dim, name, e)
    if (e /= DEVMESH_SUCCESS) name = '?'
  end function dim_backend

  ! The procedures that mirror the rest of the C API: shape, root size,
  ! parent rank and all groups against the row-major reference; the host
  ! mesh against MPI_Comm_split_type and against simulated hosts
  ! (DEVMESH_HOST_ID); a dim's backend handle against devmesh_comm; the
  ! communicators' error handler against MPI's; the version against the
  ! one meson built (argument 1).
  subroutine parity_checks()
    type(devmesh_t) :: hosts_mesh, tp_view, ret, keep
    type(MPI_Comm) :: c, shared
    type(MPI_Errhandler) :: eh
    type(c_ptr) :: h1, h2, h3
    integer(c_int), pointer :: handle_value
    integer :: shp(3), v, e, i, j, g, hosts, l, host_me, vmaj, vmin, vpat, ns
    integer, allocatable :: members(:)
    logical :: within, cyclic
    character(len=32) :: arg
    character(len=:), allocatable :: lib, bname, msg
    character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: libver

    shp = -5
    call devmesh_shape(mesh, shp, e)
    call check(e == DEVMESH_SUCCESS .and. all(shp == [dims, -5]), 'shape: MPI_Dims_create''s, entries past ndim untouched')
    shp = -5
    call devmesh_shape(sub, shp(1:2), e)
    call check(e == DEVMESH_SUCCESS .and. all(shp(1:2) == [nt, nd]), 'shape of the transposed slice')
    shp = -5
    call devmesh_shape(mesh, shp(1:1), e)
    call check(e == DEVMESH_ERR_INVALID_ARGUMENT .and. shp(1) == -5, 'shape array too small, untouched')
    msg = devmesh_last_error()
    call check(index(msg, 'devmesh_shape: ') == 1 .and. index(msg, 'maxdims is 1') > 0, 'shape array too small: message')
    v = -1
    call devmesh_root_size(sub, v, e)
    call check(e == DEVMESH_SUCCESS .and. v == nranks, 'root size of a slice is the world size')
    v = -1
    call devmesh_parent_rank(flat, v, e)
    call check(e == DEVMESH_SUCCESS .and. v == me, 'parent rank is the world rank')

    ! All groups by brute force over the row-major (dp, tp) grid.
    call check_all_groups(mesh, 'tp', [((i * nt + j, j = 0, nt - 1), i = 0, nd - 1)])
    call check_all_groups(mesh, 'dp', [((i * nt + j, i = 0, nd - 1), j = 0, nt - 1)])
    call check_all_groups(sub, 'dp', [((i * nt + j, i = 0, nd - 1), j = 0, nt - 1)])
    call check_all_groups(flat, '', [(i, i = 0, nranks - 1)])
    call check_all_groups(unflat, 'y', [((i * nt + j, j = 0, nt - 1), i = 0, nd - 1)])

    ! Real hosts: the local dim is MPI_Comm_split_type's shared-memory group.
    call devmesh_create_hosts(MPI_COMM_WORLD, hosts_mesh, e)
    call check(e == DEVMESH_SUCCESS, 'create_hosts')
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, shared)
    call MPI_Comm_size(shared, ns)
    allocate(members(ns))
    call MPI_Allgather(me, 1, MPI_INTEGER, members, 1, MPI_INTEGER, shared)
    call MPI_Comm_free(shared)
    call devmesh_size(hosts_mesh, 'local', v, e)
    call check(v == ns, 'local size is the shared-memory group''s')
    if (v == ns) call check_dim(hosts_mesh, 'local', members)
    call devmesh_dim_name(hosts_mesh, 1, name, e)
    call check(name == 'host', 'default host dim name')
    call devmesh_dim_within_hosts(hosts_mesh, 'local', within, e)
    call check(e == DEVMESH_SUCCESS .and. within, 'local stays within hosts')
    call devmesh_destroy(hosts_mesh)

    ! Simulated hosts, placed in blocks and round robin: 'gpu' holds the
    ! caller's host in rank order, 'node' one rank per host.
    hosts = merge(2, 1, mod(nranks, 2) == 0)
    l = nranks / hosts
    do g = 0, 1
      cyclic = g == 1
      host_me = merge(mod(me, hosts), me / l, cyclic)
      write(arg, '(a, i0)') 'node', host_me
      call check(c_setenv('DEVMESH_HOST_ID' // c_null_char, trim(arg) // c_null_char, 1_c_int) == 0, 'setenv')
      call devmesh_create_hosts(MPI_COMM_WORLD, hosts_mesh, e, host_dim='node', local_dim='gpu')
      call check(e == DEVMESH_SUCCESS, 'create_hosts with simulated hosts')
      shp = -5
      call devmesh_shape(hosts_mesh, shp(1:2), e)
      call check(all(shp(1:2) == [hosts, l]), 'host mesh shape')
      if (cyclic) then
        call check_dim(hosts_mesh, 'gpu', [(host_me + i * hosts, i = 0, l - 1)])
        call check_dim(hosts_mesh, 'node', [(i + (me / hosts) * hosts, i = 0, hosts - 1)])
      else
        call check_dim(hosts_mesh, 'gpu', [(host_me * l + i, i = 0, l - 1)])
        call check_dim(hosts_mesh, 'node', [(i * l + mod(me, l), i = 0, hosts - 1)])
      end if
      within = .false.
      call devmesh_dim_within_hosts(hosts_mesh, 'gpu', within, e)
      call check(e == DEVMESH_SUCCESS .and. within, 'gpu within hosts')
      within = .true.
      call devmesh_dim_within_hosts(hosts_mesh, 'node', within, e)
      call check(e == DEVMESH_SUCCESS .and. (within .eqv. hosts == 1), 'node within hosts only with one host')
      call devmesh_destroy(hosts_mesh)
    end do
    call check(c_unsetenv('DEVMESH_HOST_ID' // c_null_char) == 0, 'unsetenv')

    ! A dim's backend handle: one per layout, the communicator devmesh_comm
    ! gives (MPICH's C and Fortran handles are the same integer).
    call devmesh_dim_backend(mesh, 'tp', bname, e)
    call check(e == DEVMESH_SUCCESS .and. bname == 'mpi', 'dim_backend of tp')
    h1 = c_null_ptr
    call devmesh_backend_comm(mesh, 'tp', h1, e, backend='mpi')
    call check(e == DEVMESH_SUCCESS .and. c_associated(h1), 'backend_comm of tp')
    call devmesh_slice(mesh, ['tp'], tp_view, e)
    h2 = c_null_ptr
    call devmesh_backend_comm(tp_view, '', h2, e)
    call check(e == DEVMESH_SUCCESS .and. c_associated(h1, h2), 'backend_comm: one handle per layout')
    call devmesh_comm(mesh, 'tp', c, e)
    call MPI_Get_library_version(libver, v)
    lib = libver(1:v)
    if (index(lib, 'MPICH') > 0) then
      call c_f_pointer(h1, handle_value)
      call check(handle_value == c%MPI_VAL, 'backend_comm is devmesh_comm''s communicator')
    end if
    h3 = h1
    call devmesh_backend_comm(mesh, 'dp', h3, e, backend='nccl')
    call check(e == DEVMESH_ERR_INVALID_ARGUMENT .and. c_associated(h3, h1), 'backend_comm of another backend')
    msg = devmesh_last_error()
    call check(index(msg, "devmesh_backend_comm: ") == 1 .and. index(msg, "runs on backend 'mpi', not 'nccl'") > 0, &
               'backend_comm: message')
    call devmesh_destroy(tp_view)

    ! comm_errors=: MPI_ERRORS_RETURN on the communicators, or the parent's.
    call devmesh_create_ex(MPI_COMM_WORLD, [0, 0], ['dp', 'tp'], ret, e, comm_errors=DEVMESH_COMM_ERRORS_RETURN)
    call check(e == DEVMESH_SUCCESS, 'create_ex with comm_errors')
    call devmesh_comm(ret, 'tp', c, e)
    call MPI_Comm_get_errhandler(c, eh)
    call check(eh == MPI_ERRORS_RETURN, 'comm_errors=RETURN: MPI_ERRORS_RETURN')
    call MPI_Errhandler_free(eh)
    call MPI_Send(v, 1, MPI_INTEGER, nranks + 5, 0, c, e)
    call check(e /= MPI_SUCCESS, 'comm_errors=RETURN: a bad send returns')
    call devmesh_destroy(ret)
    call devmesh_create_ex(MPI_COMM_WORLD, [0, 0], ['dp', 'tp'], keep, e, comm_errors=DEVMESH_COMM_ERRORS_INHERIT)
    call devmesh_comm(keep, 'tp', c, e)
    call MPI_Comm_get_errhandler(c, eh)
    call check(eh == MPI_ERRORS_ARE_FATAL, 'comm_errors=INHERIT: the world''s handler')
    call MPI_Errhandler_free(eh)
    call devmesh_destroy(keep)

    ! The version of the library meson built.
    call get_command_argument(1, arg)
    vmaj = -1
    vmin = -1
    vpat = -1
    call devmesh_version(vmaj, vmin, vpat, e)
    write(libver, '(i0, a, i0, a, i0)') vmaj, '.', vmin, '.', vpat
    call check(e == DEVMESH_SUCCESS .and. trim(libver) == trim(arg), 'version ' // trim(libver) // ' is ' // trim(arg))
    vmin = -1
    call devmesh_version(minor=vmin, ierr=e)
    call check(e == DEVMESH_SUCCESS .and. vmin >= 0, 'version: one part only')
  end subroutine parity_checks

  ! devmesh_all_groups(m, dim) is want (the entry past it untouched); one
  ! entry short: DEVMESH_ERR_INVALID_ARGUMENT and nothing written.
  subroutine check_all_groups(m, dim, want)
    type(devmesh_t), intent(in) :: m
    character(len=*), intent(in) :: dim
    integer, intent(in) :: want(:)
    integer :: got(size(want) + 1), e
    got = -9
    call devmesh_all_groups(m, dim, got, e)
    call check(e == DEVMESH_SUCCESS .and. all(got(1:size(want)) == want) .and. got(size(want) + 1) == -9, &
               'all_groups of ' // dim)
    got = -9
    call devmesh_all_groups(m, dim, got(1:size(want) - 1), e)
    call check(e == DEVMESH_ERR_INVALID_ARGUMENT .and. all(got == -9), 'all_groups array too small, untouched: ' // dim)
    call check(index(devmesh_last_error(), 'devmesh_all_groups: ') == 1, 'all_groups: message names the procedure')
  end subroutine check_all_groups

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      write(*, '(a, i0, a, a, a, a)') 'rank ', me, ': FAILED ', what, ' / last error: ', devmesh_last_error()
    end if
  end subroutine check

  ! The group devmesh reports, and the members of its communicator found
  ! by an allgather, must both be `want`.
  subroutine check_dim(m, dim, want)
    type(devmesh_t), intent(in) :: m
    character(len=*), intent(in) :: dim
    integer, intent(in) :: want(:)
    type(MPI_Comm) :: c
    integer :: g(size(want)), a(size(want)), e, r
    call devmesh_group_ranks(m, dim, g, e)
    call check(e == DEVMESH_SUCCESS .and. all(g == want), 'group of ' // dim)
    call devmesh_comm(m, dim, c, e)
    call check(e == DEVMESH_SUCCESS, 'comm of ' // dim)
    call MPI_Allgather(me, 1, MPI_INTEGER, a, 1, MPI_INTEGER, c)
    call check(all(a == want), 'allgather over ' // dim)
    call MPI_Comm_rank(c, r)
    call devmesh_local_rank(m, dim, e)
    call check(r == e, 'comm rank is the local rank along ' // dim)
  end subroutine check_dim
end program test_f08
