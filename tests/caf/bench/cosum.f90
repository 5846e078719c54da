! co_sum of a large array: real(8) of n elements (default 1 Mi, 8 MiB) summed
! over every image into every image; the time per co_sum. Arguments: calls, n.
program cosum
  use bench_util, only : int_arg, us_per
  use iso_fortran_env, only : int64, real64
  implicit none
  real(real64), allocatable :: v(:)
  integer(int64) :: t0, t1
  integer :: n, m, i, me, np
  n = int_arg(1, 20)
  m = int_arg(2, 1048576)
  me = this_image()
  np = num_images()
  allocate (v(m))
  sync all
  call system_clock(t0)
  do i = 1, n
    v = me
    call co_sum(v)
  end do
  call system_clock(t1)
  if (any(v /= np * (np + 1) / 2)) error stop 'cosum: wrong sum'
  sync all
  if (me == 1) print '(a,f12.3,a,i0,a)', 'cosum: ', us_per(t0, t1, n), &
    ' us per co_sum of ', m, ' real(8)'
end program
