! event wait with until_count: every other image posts K times to an event
! on image 1, each post after writing its slot; image 1 waits for all posts at
! once (until_count=K*(np-1)) and then sees every slot. event_query counts the
! posts not yet waited for. At one image the image posts to itself.
program event_until_count
  use checks, only : fail, report_passed
  use iso_fortran_env, only : event_type
  implicit none
  integer, parameter :: k = 5
  type(event_type) :: ev[*]
  integer :: slot(64, k)[*], me, np, i, j, cnt, total
  me = this_image()
  np = num_images()
  if (np > 64) error stop 'event_until_count: at most 64 images'
  slot = 0
  sync all
  total = k * max(np - 1, 1)
  if (np == 1) then
    do j = 1, k
      slot(1, j) = j
      event post(ev[1])
    end do
  else if (me /= 1) then
    do j = 1, k
      slot(me, j)[1] = 1000 * me + j
      event post(ev[1])
    end do
  end if
  if (me == 1) then
    event wait(ev, until_count=total)
    call event_query(ev, cnt)
    if (cnt /= 0) call fail('event_query after the wait is not 0')
    do i = 2, np
      do j = 1, k
        if (slot(i, j) /= 1000 * i + j) call fail('slot not visible after event wait(until_count=)')
      end do
    end do
  end if
  sync all
  ! Posts counted by event_query before a wait; a wait with until_count takes
  ! that many and leaves the rest.
  if (me == np) then
    do j = 1, 3
      event post(ev[1])
    end do
  end if
  sync all
  if (me == 1) then
    call event_query(ev, cnt)
    if (cnt /= 3) call fail('event_query does not count 3 posts')
    event wait(ev, until_count=2)
    call event_query(ev, cnt)
    if (cnt /= 1) call fail('until_count=2 did not leave 1 post')
    event wait(ev)
  end if
  call report_passed()
end program
