! A strided get: image 1 gets every 4th element of m integers (default 16384,
! so 4096 elements of 4 B) from image 2; the time per get. Arguments: gets, m.
program strided_get
  use bench_util, only : int_arg, us_per
  use iso_fortran_env, only : int64, real64
  implicit none
  integer, allocatable :: a(:)[:], b(:)
  integer(int64) :: t0, t1
  integer :: n, m, i, me
  n = int_arg(1, 200)
  m = int_arg(2, 16384)
  me = this_image()
  if (num_images() < 2) error stop 'strided_get needs 2 images'
  allocate (a(m)[*], b(m / 4))
  a = [(i + me * m, i = 1, m)]
  sync all
  call system_clock(t0)
  if (me == 1) then
    do i = 1, n
      b = a(1:m:4)[2]
    end do
  end if
  call system_clock(t1)
  if (me == 1) then
    if (any(b /= [(4 * i + 1 + 2 * m, i = 0, m / 4 - 1)])) error stop 'strided_get: wrong values'
    print '(a,f10.3,a,i0,a)', 'strided_get: ', us_per(t0, t1, n), &
      ' us per get of ', m / 4, ' integers at stride 4'
  end if
  sync all
end program
