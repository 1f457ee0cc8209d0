! Collectives on a mixed mesh from Fortran (mpi_f08): a (2, n/2) mesh
! (dp, tp) whose tp dim runs on Gloo (TCP) and dp on MPI. A real array is
! summed over tp with devmesh_allreduce, out of place and in place, and
! checked against MPI_Allreduce over the tp dim's MPI communicator.
!
!   mpiexec -n 8 ./example_f08_collectives
!   (the Gloo plugin is found through DEVMESH_BACKEND_PATH or <libdir>/devmesh)
program collectives_f08
  use, intrinsic :: iso_c_binding, only: c_float
  use mpi_f08
  use devmesh
  implicit none
  integer, parameter :: n = 1000
  type(devmesh_t) :: mesh
  type(MPI_Comm) :: tp
  integer :: rank, size, shape(2), ierr, i, bad, any_bad, tp_size
  real(c_float) :: x(n), tp_sum(n), inplace(n), expect(n)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  shape = [2, size / 2]
  if (mod(size, 2) /= 0) shape = [1, size]
  ! dp stays on MPI; timeout: seconds Gloo waits for a peer before failing.
  call devmesh_create_ex(MPI_COMM_WORLD, shape, [character(len=2) :: 'dp', 'tp'], mesh, ierr, &
                         dim_backends='tp=gloo', dim_options='tp:timeout=60')
  if (ierr /= DEVMESH_SUCCESS) then
    write(*, '(a, i0, a)') 'rank ', rank, ': devmesh_create_ex: ' // devmesh_last_error()
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if

  ! Halves and small integers: every sum is exact, whatever the order.
  do i = 1, n
    x(i) = real(rank + 1, c_float) * 0.5 + real(mod(i, 7), c_float)
  end do
  bad = 0
  call devmesh_allreduce(mesh, 'tp', x, tp_sum, n, DEVMESH_FLOAT32, DEVMESH_SUM, ierr=ierr)
  if (ierr == DEVMESH_SUCCESS) then
    inplace = x
    call devmesh_allreduce(mesh, 'tp', inplace, inplace, n, DEVMESH_FLOAT32, DEVMESH_SUM, ierr=ierr)
  end if
  if (ierr /= DEVMESH_SUCCESS) then
    write(*, '(a, i0, a)') 'rank ', rank, ': devmesh_allreduce: ' // devmesh_last_error()
    bad = 1
  else
    call devmesh_comm(mesh, 'tp', tp)
    call MPI_Allreduce(x, expect, n, MPI_REAL, MPI_SUM, tp)
    ! Bit for bit: the sums are exact, so any difference is an error.
    bad = count(transfer(tp_sum, [0]) /= transfer(expect, [0])) + &
          count(transfer(inplace, [0]) /= transfer(expect, [0]))
  end if
  call MPI_Allreduce(bad, any_bad, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
  call devmesh_size(mesh, 'tp', tp_size)
  if (rank == 0) then
    write(*, '(a, i0, a, i0, a, i0, a)') '(', shape(1), ',', shape(2), ') mesh, tp=gloo, dp=mpi: sum over tp of ', &
      n, ' reals'
    if (any_bad == 0) then
      write(*, '(a, i0, a, g0, a)') '  matches MPI_Allreduce over the ', tp_size, ' ranks of tp (x(1) sum ', &
        tp_sum(1), ')'
    else
      write(*, '(a)') '  WRONG: differs from MPI_Allreduce over tp'
    end if
  end if
  call devmesh_destroy(mesh)
  call MPI_Finalize()
  if (any_bad /= 0) error stop 1
end program collectives_f08
