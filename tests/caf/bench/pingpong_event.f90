! Ping-pong by put + EVENT POST / EVENT WAIT: image 1 puts 8 bytes into image 2
! and posts its event; image 2 waits, puts them back and posts image 1's
! event; the time per one-way trip. Argument: round trips.
program pingpong_event
  use bench_util, only : int_arg, us_per
  use iso_fortran_env, only : int64, real64, event_type
  implicit none
  type(event_type) :: ev[*]
  integer(int64) :: buf[*], t0, t1
  integer :: n, i, me
  n = int_arg(1, 20000)
  me = this_image()
  if (num_images() < 2) error stop 'pingpong_event needs 2 images'
  buf = 0
  sync all
  call system_clock(t0)
  do i = 1, n
    if (me == 1) then
      buf[2] = i
      event post(ev[2])
      event wait(ev)
      if (buf /= i) error stop 'pingpong_event: wrong value'
    else if (me == 2) then
      event wait(ev)
      buf[1] = buf
      event post(ev[1])
    end if
  end do
  call system_clock(t1)
  sync all
  if (me == 1) print '(a,f10.3,a)', 'pingpong_event: ', us_per(t0, t1, 2 * n), &
    ' us per one-way 8 B put + event post/wait'
end program
