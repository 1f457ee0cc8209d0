! Pencil transposes from Fortran (mpi_f08), the twin of examples/c/pencil.c:
! an N x N x N array distributed in pencils over a 2-D (row, col) mesh,
! transposed X -> Y with devmesh_alltoallv along col, Y -> Z along row,
! and back Z -> Y -> X; after every transpose each rank checks every
! element it holds against its global index.
!
!   mpiexec -n 8 ./example_f08_pencil [COL_BACKEND]     (mpi, the default, or gloo)
!
! At 8 ranks the mesh is (row, col) = (2, 4). Each axis is cut into blocks
! of ceil(N / P) points, the last ones shorter or empty (N = 5 over 4
! ranks: 2, 2, 1, 0), so the exchanges have uneven blocks and zero counts.
!   X: x whole, y cut along col, z along row    memory order z, y, x
!   Y: y whole, x cut along col, z along row    memory order z, x, y
!   Z: z whole, x cut along col, y along row    memory order y, x, z
! (slowest first). Coordinates are 0-based, as in the C program; element
! (x, y, z) holds 1 + x + N (y + N z). Counts and displacements are
! 0-based element offsets, as MPI's.
module pencil_boxes
  use, intrinsic :: iso_c_binding, only: c_double
  implicit none
  integer, parameter :: x_pencil = 1, y_pencil = 2, z_pencil = 3

  ! A box of the global array, [lo, hi) per axis (1: x, 2: y, 3: z), stored
  ! with axis ord(1) slowest and ord(3) fastest.
  type box
    integer :: lo(3) = 0, hi(3) = 0, ord(3) = [3, 2, 1]
  end type box

contains

  subroutine block(n, parts, k, lo, hi)
    integer, intent(in) :: n, parts, k
    integer, intent(out) :: lo, hi
    integer :: b
    b = (n + parts - 1) / parts
    lo = min(k * b, n)
    hi = min(lo + b, n)
  end subroutine block

  ! The pencil of kind `kind` held by mesh coordinates (r, c) of a (pr, pc) mesh.
  type(box) function pencil(kind, n, pr, pc, r, c) result(p)
    integer, intent(in) :: kind, n, pr, pc, r, c
    integer :: by_col, by_row
    by_col = merge(2, 1, kind == x_pencil)
    by_row = merge(2, 3, kind == z_pencil)
    p%lo(kind) = 0
    p%hi(kind) = n
    call block(n, pc, c, p%lo(by_col), p%hi(by_col))
    call block(n, pr, r, p%lo(by_row), p%hi(by_row))
    select case (kind)
    case (x_pencil)
      p%ord = [3, 2, 1]
    case (y_pencil)
      p%ord = [3, 1, 2]
    case default
      p%ord = [2, 1, 3]
    end select
  end function pencil

  integer function extent(b, axis)
    type(box), intent(in) :: b
    integer, intent(in) :: axis
    extent = b%hi(axis) - b%lo(axis)
  end function extent

  integer function volume(b)
    type(box), intent(in) :: b
    volume = extent(b, 1) * extent(b, 2) * extent(b, 3)
  end function volume

  ! 1-based index of global point v (inside b) in b's storage.
  integer function offset(b, v)
    type(box), intent(in) :: b
    integer, intent(in) :: v(3)
    associate (o => b%ord)
      offset = ((v(o(1)) - b%lo(o(1))) * extent(b, o(2)) + v(o(2)) - b%lo(o(2))) * extent(b, o(3)) + &
               v(o(3)) - b%lo(o(3)) + 1
    end associate
  end function offset

  type(box) function intersect(a, b) result(s)
    type(box), intent(in) :: a, b
    s = a
    s%lo = max(a%lo, b%lo)
    s%hi = max(min(a%hi, b%hi), s%lo)
  end function intersect

  ! Copies the points of box s between packed (z, y, x order, starting at
  ! packed(1)) and the storage of b: to_packed packs from data, else unpacks.
  subroutine copy_box(s, b, data, packed, to_packed)
    type(box), intent(in) :: s, b
    real(c_double), intent(inout) :: data(:), packed(:)
    logical, intent(in) :: to_packed
    integer :: ix, iy, iz, k
    k = 0
    do iz = s%lo(3), s%hi(3) - 1
      do iy = s%lo(2), s%hi(2) - 1
        do ix = s%lo(1), s%hi(1) - 1
          k = k + 1
          if (to_packed) then
            packed(k) = data(offset(b, [ix, iy, iz]))
          else
            data(offset(b, [ix, iy, iz])) = packed(k)
          end if
        end do
      end do
    end do
  end subroutine copy_box
end module pencil_boxes

program pencil_f08
  use, intrinsic :: iso_c_binding, only: c_double
  use mpi_f08
  use devmesh
  use pencil_boxes
  implicit none
  type(devmesh_t) :: mesh
  integer :: rank, world, shape(2), ierr, pr, pc, r, c, n, k, failures, any_bad
  character(len=16) :: backend
  integer, parameter :: sizes(2) = [5, 7]

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, world)
  backend = 'mpi'
  if (command_argument_count() > 0) call get_command_argument(1, backend)
  shape = [2, world / 2]
  if (mod(world, 2) /= 0) shape = [1, world]
  pr = shape(1)
  pc = shape(2)
  ! row stays on MPI; timeout: seconds Gloo waits for a peer (Gloo only).
  if (trim(backend) == 'gloo') then
    call devmesh_create_ex(MPI_COMM_WORLD, shape, [character(len=3) :: 'row', 'col'], mesh, ierr, &
                           dim_backends='col=gloo', dim_options='col:timeout=60')
  else
    call devmesh_create_ex(MPI_COMM_WORLD, shape, [character(len=3) :: 'row', 'col'], mesh, ierr, &
                           dim_backends='col=' // trim(backend))
  end if
  call stop_on(ierr, 'devmesh_create_ex')
  call devmesh_local_rank(mesh, 'row', r)
  call devmesh_local_rank(mesh, 'col', c)

  failures = 0
  do k = 1, size(sizes)
    n = sizes(k)
    failures = failures + round_trip()
  end do
  call MPI_Allreduce(failures, any_bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    write(*, '(a, i0, a, i0, 3a)') '(', pr, ',', pc, ') mesh, col=', trim(backend), &
      ', row=mpi: N = 5 and 7, X->Y (col), Y->Z (row), Z->Y, Y->X with devmesh_alltoallv:'
    if (any_bad == 0) then
      write(*, '(a)') '  every element matches its global index'
    else
      write(*, '(a, i0, a)') '  WRONG ELEMENTS (', any_bad, ')'
    end if
  end if
  call devmesh_destroy(mesh)
  call MPI_Finalize()
  if (any_bad /= 0) error stop 1

contains

  subroutine stop_on(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status == DEVMESH_SUCCESS) return
    write(*, '(a, i0, 3a)') 'rank ', rank, ': ', what, ': ' // devmesh_last_error()
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine stop_on

  ! X -> Y -> Z -> Y -> X for the current n; returns the wrong elements.
  integer function round_trip() result(bad)
    real(c_double), allocatable :: x(:), y(:), z(:)
    integer :: most
    most = max(1, volume(pencil(x_pencil, n, pr, pc, r, c)), volume(pencil(y_pencil, n, pr, pc, r, c)), &
               volume(pencil(z_pencil, n, pr, pc, r, c)))
    allocate(x(most), y(most), z(most))
    x = 0
    y = 0
    z = 0
    bad = global_values(x_pencil, x, .true., '')
    call transpose('col', x_pencil, y_pencil, x, y)
    bad = bad + global_values(y_pencil, y, .false., 'X->Y')
    call transpose('row', y_pencil, z_pencil, y, z)
    bad = bad + global_values(z_pencil, z, .false., 'Y->Z')
    y = 0
    call transpose('row', z_pencil, y_pencil, z, y)
    bad = bad + global_values(y_pencil, y, .false., 'Z->Y')
    x = 0
    call transpose('col', y_pencil, x_pencil, y, x)
    bad = bad + global_values(x_pencil, x, .false., 'Y->X')
  end function round_trip

  ! Pencil `from` (data in src) to pencil `to` (into dst) along dim: the
  ! peers are the ranks of the caller's row (dim 'col') or column ('row').
  subroutine transpose(dim, from, to, src, dst)
    character(len=*), intent(in) :: dim
    integer, intent(in) :: from, to
    real(c_double), intent(inout) :: src(:), dst(:)
    type(box) :: mine_from, mine_to
    type(box), allocatable :: sendbox(:), recvbox(:)
    integer, allocatable :: sc(:), sd(:), rc(:), rd(:)
    real(c_double), allocatable :: sbuf(:), rbuf(:)
    integer :: p, j, jr, jc
    logical :: along_col
    along_col = dim == 'col'
    p = merge(pc, pr, along_col)
    allocate(sendbox(p), recvbox(p), sc(p), sd(p), rc(p), rd(p))
    mine_from = pencil(from, n, pr, pc, r, c)
    mine_to = pencil(to, n, pr, pc, r, c)
    do j = 1, p
      jr = merge(r, j - 1, along_col)
      jc = merge(j - 1, c, along_col)
      sendbox(j) = intersect(mine_from, pencil(to, n, pr, pc, jr, jc))
      recvbox(j) = intersect(pencil(from, n, pr, pc, jr, jc), mine_to)
      sc(j) = volume(sendbox(j))
      rc(j) = volume(recvbox(j))
    end do
    sd(1) = 0
    rd(1) = 0
    do j = 2, p
      sd(j) = sd(j - 1) + sc(j - 1)
      rd(j) = rd(j - 1) + rc(j - 1)
    end do
    allocate(sbuf(max(1, sum(sc))), rbuf(max(1, sum(rc))))
    do j = 1, p
      if (sc(j) > 0) call copy_box(sendbox(j), mine_from, src, sbuf(sd(j) + 1:), .true.)
    end do
    call devmesh_alltoallv(mesh, dim, sbuf, sc, sd, rbuf, rc, rd, DEVMESH_FLOAT64, ierr=ierr)
    call stop_on(ierr, 'devmesh_alltoallv along ' // dim)
    do j = 1, p
      if (rc(j) > 0) call copy_box(recvbox(j), mine_to, dst, rbuf(rd(j) + 1:), .false.)
    end do
  end subroutine transpose

  ! Fills pencil kind with the global values (fill) or counts the elements
  ! that differ from them, printing the first few.
  integer function global_values(kind, data, fill, what) result(bad)
    integer, intent(in) :: kind
    real(c_double), intent(inout) :: data(:)
    logical, intent(in) :: fill
    character(len=*), intent(in) :: what
    type(box) :: b
    integer :: ix, iy, iz, v(3)
    real(c_double) :: want
    b = pencil(kind, n, pr, pc, r, c)
    bad = 0
    do iz = b%lo(3), b%hi(3) - 1
      do iy = b%lo(2), b%hi(2) - 1
        do ix = b%lo(1), b%hi(1) - 1
          v = [ix, iy, iz]
          want = 1 + v(1) + real(n, c_double) * (v(2) + real(n, c_double) * v(3))
          if (fill) then
            data(offset(b, v)) = want
          else if (abs(data(offset(b, v)) - want) > 0.5_c_double) then  ! whole numbers: exact or off by 1 or more
            bad = bad + 1
            if (bad <= 3) write(*, '(a, i0, 3a, 3(1x, i0), 2(a, g0))') 'rank ', rank, ': ', what, &
              ' element', v, ' = ', data(offset(b, v)), ', expected ', want
          end if
        end do
      end do
    end do
  end function global_values
end program pencil_f08
