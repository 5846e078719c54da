! Halo exchange on a 2-D array section: the images form a ring; each owns
! a(0:m+1, 0:m+1) and puts its last interior column (contiguous) and its last
! interior row (strided: stride m+2) into the halo of the next image, its
! first ones into the previous image's, then SYNC ALL. The time per exchange
! (4 puts of m real(8) and a sync all). Arguments: exchanges, m.
program halo
  use bench_util, only : int_arg, us_per
  use iso_fortran_env, only : int64, real64
  implicit none
  real(real64), allocatable :: a(:, :)[:]
  integer(int64) :: t0, t1
  integer :: n, m, i, me, np, nxt, prv
  n = int_arg(1, 200)
  m = int_arg(2, 256)
  me = this_image()
  np = num_images()
  nxt = merge(1, me + 1, me == np)
  prv = merge(np, me - 1, me == 1)
  allocate (a(0:m + 1, 0:m + 1)[*])
  a = me
  sync all
  call system_clock(t0)
  do i = 1, n
    a(1:m, 0)[nxt] = a(1:m, m)
    a(1:m, m + 1)[prv] = a(1:m, 1)
    a(0, 1:m)[nxt] = a(m, 1:m)
    a(m + 1, 1:m)[prv] = a(1, 1:m)
    sync all
  end do
  call system_clock(t1)
  if (any(a(1:m, 0) /= prv) .or. any(a(0, 1:m) /= prv) .or. any(a(1:m, m + 1) /= nxt)) error stop 'halo: wrong halo'
  sync all
  if (me == 1) print '(a,f10.3,a,i0,a)', 'halo: ', us_per(t0, t1, n), &
    ' us per exchange (4 sections of ', m, ' real(8), 2 strided) + sync all'
end program
