! Litmus, message passing through a third image (causality): image 1 puts a
! payload into image 2 and runs sync images(3); image 3, after it, runs
! sync images(2); image 2, after that, reads the payload locally. Segment
! ordering is transitive, so image 1's put must be visible on image 2 though
! image 1 never synchronised with image 2 in between. Forbidden: a word of the
! payload not the round's. The payload is large (default 8192 words) so that
! its put is still in flight when the synchronisation overtakes it, if
! nothing forces it first. Needs 3 images (others idle). Prints the count;
! exits 1 on any forbidden outcome.
program mp_transitive
  implicit none
  integer, allocatable :: payload(:)[:], src(:)
  integer :: rounds, r, me, bad, total, words
  character(len=16) :: arg
  rounds = 5000
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
  if (num_images() < 3) error stop 'mp_transitive needs at least 3 images'
  allocate (payload(words)[*], src(words))
  payload = 0
  bad = 0
  sync all
  do r = 1, rounds
    select case (me)
    case (1)
      src = r
      payload(:)[2] = src
      sync images(3)
      sync images(2)           ! image 2 has checked: next round
    case (3)
      sync images(1)
      sync images(2)
    case (2)
      sync images(3)
      if (payload(1) /= r .or. payload(words) /= r .or. payload(max(1, words / 2)) /= r) bad = bad + 1
      sync images(1)
    end select
  end do
  total = bad
  call co_sum(total)
  if (me == 1) then
    print '(a,i0,a,i0,a)', 'mp_transitive: ', total, ' forbidden outcomes in ', rounds, ' rounds'
    if (total /= 0) error stop 1
    print '(a)', 'Test passed.'
  end if
end program
