! Litmus, message passing with the payload on a third image (MP-QUIET of the
! C-API family, in Fortran): image 1 puts a payload into image 3 and runs
! sync images(2); image 2, after its sync images(1), gets the payload from
! image 3 with a coindexed read. The put belongs to image 1's segment before
! SYNC IMAGES, the get to image 2's segment after it, so the get must see
! the round's words though neither image synchronised with image 3. What
! makes it so: the visibility forcing at the end of image 1's segment (the
! runtime's quiet, and the forcing before its notifying atomic), which the
! negative control PGAS_MCM_WEAKEN=no-forcing removes; on the fabric path
! the put may then still be on its way to image 3 when image 2's get
! arrives there. Forbidden: a word not the round's. Needs 3 images (others
! idle). The payload's size cycles through 1, 64, 1024 and 4096 words (the
! second argument sets the last) so that every transfer path of a provider
! is crossed. Prints the count; exits 1 on any forbidden outcome.
program mp_get_third
  implicit none
  integer, allocatable :: payload(:)[:], src(:), buf(:)
  integer :: rounds, r, me, bad, total, words, n
  character(len=16) :: arg
  rounds = 2000
  words = 4096
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) rounds
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) words
  end if
  me = this_image()
  if (num_images() < 3) error stop 'mp_get_third needs at least 3 images'
  allocate (payload(words)[*], src(words), buf(words))
  payload = 0
  bad = 0
  sync all
  do r = 1, rounds
    select case (me)
    case (1)
      n = size_of(r)
      src(1:n) = r
      payload(1:n)[3] = src(1:n)
      sync images(2)
      sync images(2)           ! image 2 has checked: next round
    case (2)
      sync images(1)
      n = size_of(r)
      buf(1:n) = payload(1:n)[3]
      if (any(buf(1:n) /= r)) bad = bad + 1
      sync images(1)
    end select
  end do
  sync all
  total = bad
  call co_sum(total)
  if (me == 1) then
    print '(a,i0,a,i0,a)', 'mp_get_third: ', total, ' forbidden outcomes in ', rounds, ' rounds'
    if (total /= 0) error stop 1
    print '(a)', 'Test passed.'
  end if
contains
  ! The round's payload size in words: 1, 64, 1024 and `words` in turn (the
  ! provider's inject, eager and rendezvous or chunked paths).
  integer function size_of(round)
    integer, intent(in) :: round
    integer, parameter :: fixed(3) = [1, 64, 1024]
    if (mod(round, 4) == 0) then
      size_of = words
    else
      size_of = min(fixed(mod(round, 4)), words)
    end if
  end function
end program
