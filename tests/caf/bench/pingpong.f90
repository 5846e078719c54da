! Ping-pong between images 1 and 2: image 1 puts 8 bytes into image 2 and
! signals it; image 2 waits, puts them back and signals image 1; the time
! per one-way trip. The signal is the first argument: "put" (SYNC IMAGES
! with the other image, both sides; reported as pingpong_put) or "event"
! (EVENT POST to the other image's event, EVENT WAIT on its own; reported as
! pingpong_event). Images beyond 2 idle. Arguments: put | event, round trips.
program pingpong
  use bench_util, only : int_arg, us_per
  use iso_fortran_env, only : int64, event_type
  implicit none
  type(event_type) :: ev[*]
  integer(int64) :: buf[*], t0, t1
  integer :: n, i, me
  character(len=8) :: how
  how = 'put'
  if (command_argument_count() >= 1) call get_command_argument(1, how)
  if (how /= 'put' .and. how /= 'event') error stop 'pingpong: the first argument is put or event'
  n = int_arg(2, 20000)
  me = this_image()
  if (num_images() < 2) error stop 'pingpong needs 2 images'
  buf = 0
  sync all
  call system_clock(t0)
  do i = 1, n
    if (me == 1) then
      buf[2] = i
      call signal(2)
      call await(2)
      if (buf /= i) error stop 'pingpong: wrong value'
    else if (me == 2) then
      call await(1)
      buf[1] = buf
      call signal(1)
    end if
  end do
  call system_clock(t1)
  sync all
  if (me == 1) print '(3a,f10.3,2a)', 'pingpong_', trim(how), ': ', us_per(t0, t1, 2 * n), &
    ' us per one-way 8 B put + ', trim(merge('event post/wait', 'sync images    ', how == 'event'))
contains
  ! Tells image `other` that the put before it is done.
  subroutine signal(other)
    integer, intent(in) :: other
    if (how == 'event') then
      event post(ev[other])
    else
      sync images(other)
    end if
  end subroutine

  ! Waits for image `other`'s signal.
  subroutine await(other)
    integer, intent(in) :: other
    if (how == 'event') then
      event wait(ev)
    else
      sync images(other)
    end if
  end subroutine
end program
