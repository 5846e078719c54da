! Ping-pong by put + SYNC IMAGES: image 1 puts 8 bytes into image 2 and syncs
! with it; image 2 puts them back and syncs; the time per one-way trip (a put
! and a sync images pair). Images beyond 2 idle. Argument: round trips.
program pingpong_put
  use bench_util, only : int_arg, us_per
  use iso_fortran_env, only : int64, real64
  implicit none
  integer(int64) :: buf[*], t0, t1
  integer :: n, i, me
  n = int_arg(1, 20000)
  me = this_image()
  if (num_images() < 2) error stop 'pingpong_put needs 2 images'
  buf = 0
  sync all
  call system_clock(t0)
  do i = 1, n
    if (me == 1) then
      buf[2] = i
      sync images(2)
      sync images(2)
      if (buf /= i) error stop 'pingpong_put: wrong value'
    else if (me == 2) then
      sync images(1)
      buf[1] = buf
      sync images(1)
    end if
  end do
  call system_clock(t1)
  sync all
  if (me == 1) print '(a,f10.3,a)', 'pingpong_put: ', us_per(t0, t1, 2 * n), &
    ' us per one-way 8 B put + sync images'
end program
