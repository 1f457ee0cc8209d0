! The bad-input matrix through the Fortran module (docs/ERRORS.md), with
! mpi_f08, under mpiexec at 1, 2 and 3 ranks: ndim and shape errors, names
! (blank, repeated, over-long), rank lists, unknown dims, overlapping
! slices, flatten clashes, unflatten mismatches, host meshes, comm_errors=,
! short output arrays, null, destroyed and non-member handles. Each case
! checks the exact ierr, that collective calls give the same ierr on every
! rank, that devmesh_last_error names the problem, and that output
! arguments are untouched. Exits non-zero (error stop) when a check fails
! on any rank.
program test_errors_f08
  use, intrinsic :: iso_c_binding, only: c_associated, c_int, c_char, c_null_char, c_ptr
  use mpi_f08
  use devmesh
  implicit none
  type(devmesh_t) :: kept, out, mesh, a, b, f, root, nomesh, listed
  integer :: nranks, me, failures, total, ierr, v, i
  integer :: small(1)
  integer, allocatable :: ranks(:)
  character(len=300) :: long_name
  character(len=:), allocatable :: name
  type(MPI_Comm) :: comm

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
  long_name = repeat('q', len(long_name))

  ! A valid handle that every failing create is given as output.
  call devmesh_create(MPI_COMM_WORLD, [0], ['kept'], kept, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'create kept')

  ! ---- creation ----------------------------------------------------------
  out = kept
  call devmesh_create(MPI_COMM_WORLD, [integer ::], [character(len=4) ::], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'ndim is 0', 'ndim 0')
  call devmesh_create(MPI_COMM_WORLD, [nranks, -1], ['a', 'b'], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'negative', 'negative size')
  call devmesh_create(MPI_COMM_WORLD, [nranks + 1], ['a'], out, ierr)
  call collective(ierr, DEVMESH_ERR_SHAPE_MISMATCH, 'multiplies to', 'shape/world mismatch')
  call named('devmesh_create', 'shape/world mismatch')
  call devmesh_create(MPI_COMM_WORLD, [65536, 65536, 65536, 65536], ['a', 'b', 'c', 'd'], out, ierr)
  call collective(ierr, DEVMESH_ERR_SHAPE_MISMATCH, 'overflows', 'shape past 63 bits')
  call devmesh_create(MPI_COMM_WORLD, [0, nranks + 1], ['a', 'b'], out, ierr)
  call collective(ierr, DEVMESH_ERR_SHAPE_MISMATCH, 'does not divide', 'zero that cannot be inferred')
  call devmesh_create(MPI_COMM_WORLD, [nranks, 1], ['a', ' '], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'is empty', 'blank name')
  call devmesh_create(MPI_COMM_WORLD, [nranks, 1], ['a', 'a'], out, ierr)
  call collective(ierr, DEVMESH_ERR_DUPLICATE_NAME, "'a' is given twice", 'duplicate names')
  call devmesh_create(MPI_COMM_WORLD, [nranks], [long_name], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'longer than 256 bytes', 'over-long name')
  call devmesh_create(MPI_COMM_WORLD, [nranks], ['a', 'b'], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, '', 'names/shape count')
  call devmesh_create(MPI_COMM_NULL, [1], ['a'], out, ierr)
  call expect(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'MPI_COMM_NULL', 'MPI_COMM_NULL parent')
  call devmesh_create_from_ranks(MPI_COMM_WORLD, [2], [0, 0], ['a'], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'rank 0 appears twice', 'repeated rank')
  call devmesh_create_from_ranks(MPI_COMM_WORLD, [1], [nranks], ['a'], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'out of range', 'rank out of range')
  call devmesh_create_from_ranks(MPI_COMM_WORLD, [1], [-1], ['a'], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'rank -1', 'negative rank')
  call devmesh_create_from_ranks(MPI_COMM_WORLD, [0], [integer ::], ['a'], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'nranks is 0', 'empty rank list')
  call devmesh_create_from_ranks(MPI_COMM_WORLD, [2], [0], ['a'], out, ierr)
  call collective(ierr, DEVMESH_ERR_SHAPE_MISMATCH, 'rank list has 1', 'rank list length')
  call named('devmesh_create_from_ranks', 'rank list length')
  call devmesh_create_ex(MPI_COMM_WORLD, [1], ['a'], out, ierr, ranks=[0], host_aware=.true.)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'rank list', 'host_aware with a rank list')
  call named('devmesh_create_ex', 'host_aware with a rank list')
  call devmesh_create_ex(MPI_COMM_WORLD, [1], ['a'], out, ierr, ranks=[nranks])
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'out of range', 'create_ex rank out of range')
  if (nranks > 1) then
    call devmesh_create(MPI_COMM_WORLD, [merge(-1, nranks, me == 0)], ['a'], out, ierr)
    call collective(ierr, DEVMESH_ERR_INCONSISTENT, 'different arguments', 'one rank alone')
  end if
  call check(c_associated(out%ptr, kept%ptr), 'failed creates leave the output handle untouched')

  ! ---- views ---------------------------------------------------------------
  call devmesh_create(MPI_COMM_WORLD, [nranks, 1, 1], ['a', 'b', 'c'], mesh, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'create (a, b, c)')
  out = kept
  call devmesh_slice(mesh, ['a ', 'zz'], out, ierr)
  call collective(ierr, DEVMESH_ERR_UNKNOWN_DIM, "unknown dim 'zz'", 'slice unknown dim')
  call devmesh_slice(mesh, ['b', 'b'], out, ierr)
  call collective(ierr, DEVMESH_ERR_DUPLICATE_NAME, 'sliced twice', 'slice repeated dim')
  call named('devmesh_slice', 'slice repeated dim')
  call devmesh_slice(mesh, [character(len=1) ::], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'n is 0', 'slice of no dims')
  if (nranks > 1) then  ! at one rank b (size 1) has the mesh's layout: then it is b again
    call devmesh_flatten(mesh, 'b', out, ierr)
    call collective(ierr, DEVMESH_ERR_DUPLICATE_NAME, 'is a dim of the root', 'flatten into a root dim')
  end if
  call devmesh_flatten(mesh, long_name, out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'longer than 256 bytes', 'flatten over-long name')
  call devmesh_unflatten(mesh, 'a', [nranks + 1], ['x'], out, ierr)
  call collective(ierr, DEVMESH_ERR_SHAPE_MISMATCH, 'multiply to', 'unflatten product')
  call devmesh_unflatten(mesh, 'a', [0, nranks], ['x', 'y'], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'at least 1', 'unflatten size 0')
  call devmesh_unflatten(mesh, 'a', [-2, nranks], ['x', 'y'], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'size -2', 'unflatten negative size')
  call devmesh_unflatten(mesh, 'a', [-1, -1], ['x', 'y'], out, ierr)
  call collective(ierr, DEVMESH_ERR_SHAPE_MISMATCH, 'more than one size -1', 'unflatten two inferred sizes')
  call devmesh_unflatten(mesh, 'a', [nranks, 1], ['x'], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, '2 sizes but 1 names', 'unflatten count')
  call devmesh_unflatten(mesh, 'a', [integer ::], [character(len=1) ::], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'n is 0', 'unflatten of no sizes')
  call devmesh_unflatten(mesh, 'zz', [nranks], ['x'], out, ierr)
  call collective(ierr, DEVMESH_ERR_UNKNOWN_DIM, "unknown dim 'zz'", 'unflatten unknown dim')
  call devmesh_unflatten(mesh, 'a', [nranks, 1], ['x', 'x'], out, ierr)
  call collective(ierr, DEVMESH_ERR_DUPLICATE_NAME, 'given twice', 'unflatten repeated names')
  call devmesh_unflatten(mesh, 'a', [nranks, 1], ['x', 'c'], out, ierr)
  call collective(ierr, DEVMESH_ERR_DUPLICATE_NAME, 'already a dim of this view', 'unflatten clash')
  call devmesh_unflatten(mesh, 'a', [nranks, 1], ['x', ' '], out, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'is empty', 'unflatten blank name')
  ! Flattened names: registered on the root; a different layout clashes,
  ! and a registered name overlaps the dims it was made from.
  call devmesh_slice(mesh, ['a'], a, ierr)
  call devmesh_flatten(a, 'f', f, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'flatten a into f')
  call devmesh_slice(a, ['f'], out, ierr)
  call collective(ierr, DEVMESH_ERR_UNKNOWN_DIM, "unknown dim 'f'", 'registered name from a non-root view')
  if (nranks > 1) then
    ! A name for another layout than its own (at one rank every layout is
    ! the same: a name reused for the same layout is that dim again).
    call devmesh_unflatten(mesh, 'a', [nranks, 1], ['y', 'f'], out, ierr)
    call collective(ierr, DEVMESH_ERR_DUPLICATE_NAME, "'f' is a registered", 'unflatten into a registered name')
    call devmesh_unflatten(a, 'a', [nranks, 1], ['c', 'x'], out, ierr)
    call collective(ierr, DEVMESH_ERR_DUPLICATE_NAME, "'c' is a dim of the root", 'unflatten into a root dim')
    ! b (size 1) has another layout than a (size nranks).
    call devmesh_slice(mesh, ['b'], b, ierr)
    call devmesh_flatten(b, 'f', out, ierr)
    call collective(ierr, DEVMESH_ERR_DUPLICATE_NAME, 'already registered', 'flatten registered clash')
    call devmesh_destroy(b)
    call devmesh_root(a, root, ierr)
    call devmesh_slice(root, ['f', 'a'], out, ierr)
    call collective(ierr, DEVMESH_ERR_OVERLAP, 'cover the same ranks', 'slice overlapping dims')
    call devmesh_destroy(root)
  end if
  call check(c_associated(out%ptr, kept%ptr), 'failed view calls leave the output handle untouched')

  ! ---- queries -------------------------------------------------------------
  v = -7
  call devmesh_size(mesh, 'zz', v, ierr)
  call expect(ierr, DEVMESH_ERR_UNKNOWN_DIM, "'zz'", 'size of an unknown dim')
  call devmesh_local_rank(mesh, ' ', v, ierr)
  call expect(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'a dim name is needed', 'local rank without a dim name')
  call devmesh_comm(mesh, 'zz', comm, ierr)
  call expect(ierr, DEVMESH_ERR_UNKNOWN_DIM, "'zz'", 'comm of an unknown dim')
  call named('devmesh_comm', 'comm of an unknown dim')
  call check(v == -7, 'query outputs untouched')
  call devmesh_dim_name(mesh, 0, name, ierr)
  call expect(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'out of range', 'dim_name(0)')
  call devmesh_dim_name(mesh, 4, name, ierr)
  call expect(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'out of range [0, 3)', 'dim_name(ndim + 1)')
  call check(.not. allocated(name), 'dim_name output untouched')
  small = -7
  call devmesh_coordinate(mesh, small, ierr)
  call expect(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'maxdims is 1 but coord needs 3 entries', 'coordinate array too small')
  call check(small(1) == -7, 'coordinate output untouched')
  call devmesh_create_comms(mesh, 7, ierr)
  call collective(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'path 7', 'unknown creation path')
  if (nranks > 1) then
    call devmesh_create_comms(mesh, merge(7, DEVMESH_COMM_PATH_AUTOMATIC, me == 0), ierr)
    call collective(ierr, DEVMESH_ERR_INCONSISTENT, 'different', 'unknown creation path on one rank')
  end if

  call parity_errors()

  ! ---- null, destroyed and non-member handles ------------------------------
  call check_null_handle(nomesh, 'never-created handle')
  call devmesh_destroy(f, ierr)
  call check(ierr == DEVMESH_SUCCESS .and. .not. devmesh_associated(f), 'destroy nulls the handle')
  call check_null_handle(f, 'destroyed handle')
  call devmesh_destroy(f, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'destroying a destroyed handle again')
  if (nranks > 1) then
    allocate(ranks(nranks - 1))
    ranks = [(i, i = 1, nranks - 1)]
    call devmesh_create_from_ranks(MPI_COMM_WORLD, [0], ranks, ['x'], listed, ierr)
    call check(ierr == DEVMESH_SUCCESS, 'create without rank 0')
    if (me == 0) then
      call check(.not. devmesh_associated(listed), 'non-member gets the null handle')
      call check_null_handle(listed, 'non-member handle')
    end if
    call devmesh_destroy(listed, ierr)
    call check(ierr == DEVMESH_SUCCESS, 'destroy of a member or null handle')
  end if

  call devmesh_destroy(a)
  call devmesh_destroy(mesh)
  call devmesh_destroy(kept)

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) write(*, '(a, i0, a, i0, a)') 'test_errors_f08 on ', nranks, ' ranks: ', total, ' failures'
  call MPI_Finalize()
  if (total /= 0) error stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      write(*, '(a, i0, a, a, a, a)') 'rank ', me, ': FAILED ', what, ' / last error: ', devmesh_last_error()
    end if
  end subroutine check

  ! The exact status and a message containing needle.
  subroutine expect(got, want, needle, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: needle, what
    character(len=12) :: g, w
    write(g, '(i0)') got
    write(w, '(i0)') want
    call check(got == want, what // ': ierr ' // trim(g) // ', expected ' // trim(w))
    call check(index(devmesh_last_error(), needle) > 0, what // ': message lacks "' // needle // '"')
  end subroutine expect

  ! The last error names the Fortran procedure the program called (not the
  ! C function behind it, e.g. devmesh_comm_f).
  subroutine named(proc, what)
    character(len=*), intent(in) :: proc, what
    character(len=:), allocatable :: text
    text = devmesh_last_error()
    call check(index(text, proc // ': ') == 1, what // ': message does not start with "' // proc // ': "')
    call check(index(text, '_f:') == 0 .and. index(text, '_rank_list') == 0, &
               what // ': message names a C function')
  end subroutine named

  ! The same for a call every rank made: the status agrees everywhere.
  subroutine collective(got, want, needle, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: needle, what
    integer :: lo, hi
    call expect(got, want, needle, what)
    call MPI_Allreduce(got, lo, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
    call MPI_Allreduce(got, hi, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
    call check(lo == hi, what // ': ranks got different ierr')
  end subroutine collective

  ! The procedures that mirror the rest of the C API: unknown dims, short
  ! arrays, hosts and comm_errors=, each with its status (the same on every
  ! rank for collective calls), a message naming the procedure, and the
  ! outputs untouched.
  subroutine parity_errors()
    type(devmesh_t) :: o, hm
    type(c_ptr) :: h
    integer :: e, arr(2)
    logical :: within
    character(len=:), allocatable :: nm
    arr = -7
    call devmesh_all_groups(mesh, 'zz', arr, e)
    call expect(e, DEVMESH_ERR_UNKNOWN_DIM, "'zz'", 'all_groups of an unknown dim')
    call named('devmesh_all_groups', 'all_groups of an unknown dim')
    call devmesh_shape(mesh, arr, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, 'maxdims is 2 but shape needs 3 entries', 'shape array too small')
    call named('devmesh_shape', 'shape array too small')
    call check(all(arr == -7), 'all_groups and shape outputs untouched')
    call devmesh_dim_backend(mesh, 'zz', nm, e)
    call expect(e, DEVMESH_ERR_UNKNOWN_DIM, "'zz'", 'dim_backend of an unknown dim')
    call named('devmesh_dim_backend', 'dim_backend of an unknown dim')
    call check(.not. allocated(nm), 'dim_backend output untouched')
    h = kept%ptr
    call devmesh_backend_comm(mesh, 'zz', h, e)
    call expect(e, DEVMESH_ERR_UNKNOWN_DIM, "'zz'", 'backend_comm of an unknown dim')
    call named('devmesh_backend_comm', 'backend_comm of an unknown dim')
    call check(c_associated(h, kept%ptr), 'backend_comm output untouched')
    within = .true.
    call devmesh_dim_within_hosts(mesh, 'a', within, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, '', 'dim_within_hosts of a mesh without hosts')
    call named('devmesh_dim_within_hosts', 'dim_within_hosts of a mesh without hosts')
    call check(within, 'dim_within_hosts output untouched')

    o = kept
    call devmesh_create_ex(MPI_COMM_WORLD, [0], ['a'], o, e, comm_errors=7)
    call collective(e, DEVMESH_ERR_INVALID_ARGUMENT, 'comm_errors', 'comm_errors 7')
    call named('devmesh_create_ex', 'comm_errors 7')
    call devmesh_create_hosts(MPI_COMM_WORLD, o, e, host_dim='n', local_dim='n')
    call collective(e, DEVMESH_ERR_DUPLICATE_NAME, "'n'", 'create_hosts with equal names')
    call named('devmesh_create_hosts', 'create_hosts with equal names')
    call devmesh_create_hosts(MPI_COMM_NULL, o, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, 'MPI_COMM_NULL', 'create_hosts of MPI_COMM_NULL')
    call named('devmesh_create_hosts', 'create_hosts of MPI_COMM_NULL')
    ! No dim (blank: NULL in C) names the only dim of a 1-D view; on the 2-D
    ! (host, local) mesh it is refused on every rank, within untouched.
    call devmesh_create_hosts(MPI_COMM_WORLD, hm, e)
    call collective(e, DEVMESH_SUCCESS, '', 'create_hosts')
    within = .true.
    call devmesh_dim_within_hosts(hm, '', within, e)
    call collective(e, DEVMESH_ERR_INVALID_ARGUMENT, '', 'dim_within_hosts without a dim on a 2-D mesh')
    call named('devmesh_dim_within_hosts', 'dim_within_hosts without a dim on a 2-D mesh')
    call check(within, 'dim_within_hosts without a dim: output untouched')
    call devmesh_destroy(hm)
    call devmesh_create_ex(MPI_COMM_WORLD, [0], ['x'], hm, e, host_aware=.true.)
    call collective(e, DEVMESH_SUCCESS, '', 'host-aware 1-D mesh')
    call devmesh_dim_within_hosts(hm, '', within, e)
    call collective(e, DEVMESH_SUCCESS, '', 'dim_within_hosts without a dim on a 1-D mesh')
    call devmesh_destroy(hm)
    if (nranks > 1) then
      ! A host id on the last rank only.
      if (me == nranks - 1) call check(c_setenv('DEVMESH_HOST_ID' // c_null_char, 'x' // c_null_char, 1_c_int) == 0, &
                                       'setenv')
      call devmesh_create_hosts(MPI_COMM_WORLD, o, e)
      call collective(e, DEVMESH_ERR_INCONSISTENT, 'DEVMESH_HOST_ID', 'host id on one rank only')
    end if
    if (nranks >= 3) then
      ! Rank 0 alone on its host, the others together.
      call check(c_setenv('DEVMESH_HOST_ID' // c_null_char, merge('lonely  ', 'crowded ', me == 0) // c_null_char, &
                          1_c_int) == 0, 'setenv')
      call devmesh_create_hosts(MPI_COMM_WORLD, o, e)
      call collective(e, DEVMESH_ERR_SHAPE_MISMATCH, 'host 0: 1', 'hosts of different sizes')
    end if
    call check(c_unsetenv('DEVMESH_HOST_ID' // c_null_char) == 0, 'unsetenv')
    call check(c_associated(o%ptr, kept%ptr), 'failed host and comm_errors creates leave the output untouched')
  end subroutine parity_errors

  ! Every routine that takes a handle, on the null handle m: ierr
  ! DEVMESH_ERR_INVALID_ARGUMENT, outputs untouched. None is collective.
  subroutine check_null_handle(m, what)
    type(devmesh_t), intent(in) :: m
    character(len=*), intent(in) :: what
    type(devmesh_t) :: o
    type(MPI_Comm) :: c
    integer :: e, x, arr(2)
    character(len=:), allocatable :: nm
    character(len=*), parameter :: null = 'handle is NULL'
    logical :: within
    type(c_ptr) :: h
    call check(.not. devmesh_associated(m), what // ': is null')
    o = kept
    x = -7
    arr = -7
    c = MPI_COMM_SELF
    call devmesh_slice(m, ['a'], o, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': slice')
    call devmesh_flatten(m, 'g', o, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': flatten')
    call devmesh_unflatten(m, 'a', [1], ['x'], o, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': unflatten')
    call devmesh_root(m, o, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': root')
    call check(c_associated(o%ptr, kept%ptr), what // ': output handle untouched')
    call devmesh_ndim(m, x, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': ndim')
    call devmesh_size(m, 'a', x, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': size')
    call devmesh_local_rank(m, 'a', x, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': local_rank')
    call devmesh_comm_count(m, x, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': comm_count')
    call check(x == -7, what // ': integer outputs untouched')
    call devmesh_coordinate(m, arr, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': coordinate')
    call devmesh_group_ranks(m, 'a', arr, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': group_ranks')
    call devmesh_group_ranks(m, ' ', arr, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': group_ranks of the only dim')
    call check(all(arr == -7), what // ': array outputs untouched')
    call devmesh_dim_name(m, 1, nm, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': dim_name')
    call check(.not. allocated(nm), what // ': name untouched')
    call devmesh_comm(m, 'a', c, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': comm')
    call devmesh_cart_comm(m, c, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': cart_comm')
    call named('devmesh_cart_comm', what // ': cart_comm')
    call check(c == MPI_COMM_SELF, what // ': communicator untouched')
    call devmesh_create_comms(m, ierr=e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': create_comms')
    call devmesh_shape(m, arr, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': shape')
    call devmesh_all_groups(m, 'a', arr, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': all_groups')
    call check(all(arr == -7), what // ': shape and all_groups untouched')
    call devmesh_root_size(m, x, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': root_size')
    call devmesh_parent_rank(m, x, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': parent_rank')
    call check(x == -7, what // ': root_size and parent_rank untouched')
    within = .false.
    call devmesh_dim_within_hosts(m, 'a', within, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': dim_within_hosts')
    call check(.not. within, what // ': dim_within_hosts untouched')
    call devmesh_dim_backend(m, 'a', nm, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': dim_backend')
    call check(.not. allocated(nm), what // ': dim_backend untouched')
    h = kept%ptr
    call devmesh_backend_comm(m, 'a', h, e)
    call expect(e, DEVMESH_ERR_INVALID_ARGUMENT, null, what // ': backend_comm')
    call named('devmesh_backend_comm', what // ': backend_comm')
    call check(c_associated(h, kept%ptr), what // ': backend_comm untouched')
  end subroutine check_null_handle
end program test_errors_f08
