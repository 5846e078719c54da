! A 2-D halo exchange on a periodic grid of images: each image owns an
! nx x ny block with a one-cell halo, and exchanges its edges with its four
! neighbours, once by PUTs (caf_send: columns are contiguous, rows strided)
! and once by GETs (caf_get), then checks every halo cell against the
! function the neighbours filled their blocks with. Runs at any number of
! images (a grid of px x py images; at one image every neighbour is this
! image).
program halo_2d
  use checks, only : report_passed
  implicit none
  integer, parameter :: nx = 37, ny = 23
  real(8) :: u(0:nx+1, 0:ny+1)[*], g(0:nx+1, 0:ny+1)
  integer :: me, np, px, py, ix, iy, north, south, east, west, i, j, bad

  me = this_image()
  np = num_images()
  px = int(sqrt(real(np)))
  do while (mod(np, px) /= 0)
    px = px - 1
  end do
  py = np / px
  ix = mod(me - 1, px)
  iy = (me - 1) / px
  east = image_at(ix + 1, iy)
  west = image_at(ix - 1, iy)
  north = image_at(ix, iy + 1)
  south = image_at(ix, iy - 1)

  u = -1
  do j = 1, ny
    do i = 1, nx
      u(i, j) = f(ix*nx + i, iy*ny + j)
    end do
  end do
  sync all

  ! PUT my edges into my neighbours' halos.
  u(0, 1:ny)[east] = u(nx, 1:ny)
  u(nx+1, 1:ny)[west] = u(1, 1:ny)
  u(1:nx, 0)[north] = u(1:nx, ny)
  u(1:nx, ny+1)[south] = u(1:nx, 1)
  sync all
  bad = check_halo(u)
  if (bad /= 0) then
    print *, 'image', me, ': FAILED: PUT halo exchange,', bad, 'wrong cells'
    error stop 1
  end if

  ! GET my halos from my neighbours' edges.
  g = u
  g(0, 1:ny) = -2
  g(nx+1, 1:ny) = -2
  g(1:nx, 0) = -2
  g(1:nx, ny+1) = -2
  g(0, 1:ny) = u(nx, 1:ny)[west]
  g(nx+1, 1:ny) = u(1, 1:ny)[east]
  g(1:nx, 0) = u(1:nx, ny)[south]
  g(1:nx, ny+1) = u(1:nx, 1)[north]
  bad = check_halo(g)
  if (bad /= 0) then
    print *, 'image', me, ': FAILED: GET halo exchange,', bad, 'wrong cells'
    error stop 1
  end if

  call report_passed()
contains
  pure function f(gi, gj) result(v)
    integer, intent(in) :: gi, gj
    real(8) :: v
    v = 1000d0*modulo(gi - 1, px*nx) + modulo(gj - 1, py*ny)
  end function

  integer function image_at(x, y)
    integer, intent(in) :: x, y
    image_at = modulo(y, py)*px + modulo(x, px) + 1
  end function

  integer function check_halo(a) result(nbad)
    real(8), intent(in) :: a(0:nx+1, 0:ny+1)
    integer :: k
    nbad = 0
    do k = 1, ny
      if (a(0, k) /= f(ix*nx, iy*ny + k)) nbad = nbad + 1
      if (a(nx+1, k) /= f(ix*nx + nx + 1, iy*ny + k)) nbad = nbad + 1
    end do
    do k = 1, nx
      if (a(k, 0) /= f(ix*nx + k, iy*ny)) nbad = nbad + 1
      if (a(k, ny+1) /= f(ix*nx + k, iy*ny + ny + 1)) nbad = nbad + 1
    end do
    ! Corners are not exchanged and stay as they were.
    if (a(0, 0) /= -1 .or. a(nx+1, ny+1) /= -1) nbad = nbad + 1
  end function
end program
