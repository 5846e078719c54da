! Litmus, message passing by EVENT POST / EVENT WAIT: image 1 puts a payload
! of four words into image 2, then posts an event on image 2; image 2 waits
! for it and reads the payload locally. Forbidden: a word other than the
! round's. Image 2 returns the turn by posting an event on image 1. Pairs
! (1,2), (3,4), ...; prints the count and exits 1 on any forbidden outcome.
program mp_event
  use iso_fortran_env, only : event_type
  implicit none
  integer, parameter :: words = 4
  type(event_type) :: ready[*], done[*]
  integer :: payload(words)[*], rounds, r, me, partner, bad, total
  character(len=16) :: arg
  rounds = 20000
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) rounds
  end if
  me = this_image()
  partner = merge(me + 1, me - 1, mod(me, 2) == 1)
  if (partner > num_images()) partner = 0
  payload = 0
  bad = 0
  sync all
  if (partner /= 0) then
    do r = 1, rounds
      if (mod(me, 2) == 1) then
        payload(:)[partner] = r
        event post(ready[partner])
        event wait(done)
      else
        event wait(ready)
        if (any(payload /= r)) bad = bad + 1
        event post(done[partner])
      end if
    end do
  end if
  total = bad
  call co_sum(total)
  if (me == 1) then
    print '(a,i0,a,i0,a)', 'mp_event: ', total, ' forbidden outcomes in ', rounds, ' rounds'
    if (total /= 0) error stop 1
    print '(a)', 'Test passed.'
  end if
end program
