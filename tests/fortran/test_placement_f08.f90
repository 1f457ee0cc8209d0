! Placement through the module devmesh (create_ex's placement=,
! devmesh_dim_within) over levels each rank gives itself before creation:
! hosts of 2 ranks (DEVMESH_HOST_ID 'h<r/2>'), domains of 2 hosts
! (DEVMESH_TOPOLOGY 'domain=d<r/4>'). A (0,4) mesh (dp,tp) with
! placement='tp=domain': each tp group, read from its communicator (an
! allgather of world ranks), lies in one domain with the ranks of each host
! consecutive; devmesh_dim_within says so (tp within domains, not hosts; dp
! within neither). A (1,4) mesh through the integer communicator: 4
! members, the others the null handle. Bad placements and levels refused
! with the same status on every rank, the output left null or unchanged; a
! blank placement is none. Runs on a world of whole domains (a multiple of
! 4 ranks). Exits non-zero (error stop) when a check fails on any rank.
program test_placement_f08
  use, intrinsic :: iso_c_binding, only: c_int, c_char, c_null_char
  use mpi_f08
  use devmesh
  implicit none
  interface
    integer(c_int) function setenv(name, value, overwrite) bind(C, name='setenv')
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*), value(*)
      integer(c_int), value :: overwrite
    end function setenv
  end interface
  type(devmesh_t) :: mesh, out
  type(MPI_Comm) :: tp
  integer :: nranks, me, failures, total, ierr, root, members, mine, k
  integer, allocatable :: group(:)
  logical :: within, one_domain, by_host
  character(len=16) :: text
  character(len=:), allocatable :: message

  call MPI_Init()
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  failures = 0
  if (mod(nranks, 4) /= 0) then
    if (me == 0) print '(a, i0, a)', 'FAIL: ', nranks, ' ranks; this program plays whole domains of 4 ranks'
    call MPI_Finalize()
    error stop 1
  end if
  write(text, '(a, i0)') 'h', me / 2
  call check(setenv('DEVMESH_HOST_ID' // c_null_char, trim(text) // c_null_char, 1_c_int) == 0, 'setenv host')
  write(text, '(a, i0)') 'domain=d', me / 4
  call check(setenv('DEVMESH_TOPOLOGY' // c_null_char, trim(text) // c_null_char, 1_c_int) == 0, 'setenv topology')

  ! tp a whole domain, its hosts consecutive.
  call devmesh_create_ex(MPI_COMM_WORLD, [0, 4], ['dp', 'tp'], mesh, ierr, placement='tp=domain')
  call check(ierr == DEVMESH_SUCCESS .and. devmesh_associated(mesh), 'create (0,4) with tp=domain')
  if (devmesh_associated(mesh)) then
    call devmesh_comm(mesh, 'tp', tp, ierr)
    call check(ierr == DEVMESH_SUCCESS, 'the communicator of tp')
    allocate(group(4))
    call MPI_Allgather(me, 1, MPI_INTEGER, group, 1, MPI_INTEGER, tp)
    one_domain = all(group / 4 == me / 4)
    by_host = .true.
    do k = 2, size(group)
      if (group(k) / 2 /= group(k - 1) / 2) by_host = by_host .and. all(group(1:k - 1) / 2 /= group(k) / 2)
    end do
    call check(one_domain, 'the tp group lies in one domain')
    call check(by_host, 'the tp group has each host''s ranks consecutive')
    call devmesh_dim_within(mesh, 'tp', 'domain', within, ierr)
    call check(ierr == DEVMESH_SUCCESS .and. within, 'dim_within(tp, domain)')
    call devmesh_dim_within(mesh, 'tp', 'host', within, ierr)
    call check(ierr == DEVMESH_SUCCESS .and. .not. within, 'dim_within(tp, host)')
    call devmesh_dim_within(mesh, 'dp', 'domain', within, ierr)
    call check(ierr == DEVMESH_SUCCESS .and. .not. within, 'dim_within(dp, domain)')
    within = .true.
    call devmesh_dim_within(mesh, 'tp', ' ', within, ierr)
    call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT .and. within, 'dim_within with a blank level')
    call devmesh_dim_within(mesh, 'tp', 'rack', within, ierr)
    call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT .and. within, 'dim_within of level rack')
    message = devmesh_last_error()
    call check(index(message, 'devmesh_dim_within: ') == 1 .and. index(message, "'rack'") > 0, &
               'dim_within of level rack: message')
    call devmesh_dim_within(mesh, 'pp', 'domain', within, ierr)
    call check(ierr == DEVMESH_ERR_UNKNOWN_DIM .and. within, 'dim_within of dim pp')
    call devmesh_destroy(mesh, ierr)
  end if

  ! (1,4) through the integer communicator: the ranks left over get the null handle.
  call devmesh_create_ex(MPI_COMM_WORLD%MPI_VAL, [1, 4], ['dp', 'tp'], mesh, ierr, placement='tp=domain')
  call check(ierr == DEVMESH_SUCCESS, 'create (1,4) with tp=domain (integer comm)')
  mine = merge(1, 0, devmesh_associated(mesh))
  call MPI_Allreduce(mine, members, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(members == 4, 'four members, the others left over')
  if (devmesh_associated(mesh)) then
    call devmesh_dim_within(mesh, 'tp', 'domain', within, ierr)
    call check(ierr == DEVMESH_SUCCESS .and. within, 'leftovers: dim_within(tp, domain)')
    call devmesh_destroy(mesh, ierr)
  end if

  ! Refused alike on every rank; no mesh.
  call devmesh_create_ex(MPI_COMM_WORLD, [0, 4], ['dp', 'tp'], out, ierr, placement='tp')
  call refused(DEVMESH_ERR_INVALID_ARGUMENT, 'is not of the form dim=level', 'placement tp')
  call devmesh_create_ex(MPI_COMM_WORLD, [0, 4], ['dp', 'tp'], out, ierr, placement='pp=host')
  call refused(DEVMESH_ERR_UNKNOWN_DIM, 'names no dim', 'placement pp=host')
  call devmesh_create_ex(MPI_COMM_WORLD, [0, 4], ['dp', 'tp'], out, ierr, placement='tp=rack')
  call refused(DEVMESH_ERR_INVALID_ARGUMENT, "'rack'", 'placement tp=rack')
  call devmesh_create_ex(MPI_COMM_WORLD, [0, 4], ['dp', 'tp'], out, ierr, placement='tp=host')
  call refused(DEVMESH_ERR_SHAPE_MISMATCH, "larger than its level 'host'", 'placement tp=host')
  call devmesh_create_ex(MPI_COMM_WORLD, [0, 4], ['dp', 'tp'], out, ierr, placement='tp=domain', host_aware=.true.)
  call refused(DEVMESH_ERR_INVALID_ARGUMENT, 'host_aware', 'placement with host_aware')

  ! A blank placement is none: parent rank order.
  call devmesh_create_ex(MPI_COMM_WORLD, [0, 4], ['dp', 'tp'], mesh, ierr, placement=' ')
  call check(ierr == DEVMESH_SUCCESS .and. devmesh_associated(mesh), 'create with a blank placement')
  if (devmesh_associated(mesh)) then
    call devmesh_root_index(mesh, root, ierr)
    call check(ierr == DEVMESH_SUCCESS .and. root == me, 'blank placement: root index = rank')
    call devmesh_destroy(mesh, ierr)
  end if

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Finalize()
  if (total > 0) error stop 1
  if (me == 0) print '(a)', 'placement and dim_within: ok'

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      print '(a, i0, 2a)', 'FAIL rank ', me, ': ', what
      if (len_trim(devmesh_last_error()) > 0) print '(2a)', '  last error: ', devmesh_last_error()
    end if
  end subroutine check

  ! ierr is want on every rank, the message names the procedure and words,
  ! out is still the null handle.
  subroutine refused(want, words, what)
    integer, intent(in) :: want
    character(len=*), intent(in) :: words, what
    integer :: lo, hi
    call MPI_Allreduce(ierr, lo, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
    call MPI_Allreduce(ierr, hi, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
    call check(ierr == want, what // ': status')
    call check(lo == hi, what // ': the same status on every rank')
    message = devmesh_last_error()
    call check(index(message, 'devmesh_create_ex: ') == 1 .and. index(message, words) > 0, what // ': message')
    call check(.not. devmesh_associated(out), what // ': no mesh')
  end subroutine refused
end program test_placement_f08
