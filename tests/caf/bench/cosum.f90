! co_sum of a large array: real(8) of n elements (default 1 Mi, 8 MiB) summed
! over every image into every image; the time per co_sum. Arguments: calls, n.
program cosum
  use iso_fortran_env, only : int64, real64
  implicit none
  real(real64), allocatable :: v(:)
  integer(int64) :: t0, t1, rate
  integer :: n, m, i, me, np
  character(len=16) :: arg
  n = 20
  m = 1048576
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) m
  end if
  me = this_image()
  np = num_images()
  allocate (v(m))
  sync all
  call system_clock(t0, rate)
  do i = 1, n
    v = me
    call co_sum(v)
  end do
  call system_clock(t1)
  if (any(v /= np * (np + 1) / 2)) error stop 'cosum: wrong sum'
  sync all
  if (me == 1) print '(a,f12.3,a,i0,a)', 'cosum: ', real(t1 - t0, real64) / rate * 1d6 / n, &
    ' us per co_sum of ', m, ' real(8)'
end program
