! Litmus, message passing through a third image by events (causality):
! image 1 puts a payload into image 2, posts an event on image 3 and goes on
! computing without calling the library; image 3 waits for it and posts an
! event on image 2; image 2 waits for that and reads the payload locally.
! EVENT POST ends image 1's segment, and segment order is transitive, so the
! payload must be there. Without the segment's forcing (the negative control
! PGAS_CAF_WEAKEN=no-segment-fence) the put may still sit in image 1's
! transmit queue on a provider that needs the initiator's progress, which
! image 1 does not make while it computes. Forbidden: a word of the payload
! not the round's. Needs 3 images (others idle). Prints the count; exits 1
! on any forbidden outcome.
program mp_event_relay
  use iso_fortran_env, only: event_type
  implicit none
  integer, allocatable :: payload(:)[:], src(:)
  type(event_type), allocatable :: go(:)[:]
  integer :: rounds, r, me, bad, total, words, i
  real :: x
  character(len=16) :: arg
  rounds = 1000
  words = 8192
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) rounds
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) words
  end if
  me = this_image()
  if (num_images() < 3) error stop 'mp_event_relay needs at least 3 images'
  allocate (payload(words)[*], src(words), go(3)[*])
  payload = 0
  bad = 0
  x = 1.0
  sync all
  do r = 1, rounds
    select case (me)
    case (1)
      src = r
      payload(:)[2] = src
      event post (go(1)[3])
      ! Compute for a while without calling the library.
      do i = 1, 20000
        x = x * 1.0000001 + 1.0e-7
      end do
      event wait (go(3))         ! image 2 has checked: next round
    case (3)
      event wait (go(1))
      event post (go(2)[2])
    case (2)
      event wait (go(2))
      if (payload(1) /= r .or. payload(words) /= r .or. payload(max(1, words / 2)) /= r) bad = bad + 1
      event post (go(3)[1])
    end select
  end do
  if (x < 0.0) print *, x
  total = bad
  call co_sum(total)
  if (me == 1) then
    print '(a,i0,a,i0,a)', 'mp_event_relay: ', total, ' forbidden outcomes in ', rounds, ' rounds'
    if (total /= 0) error stop 1
    print '(a)', 'Test passed.'
  end if
end program
