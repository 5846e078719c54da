! Litmus, message passing by SYNC IMAGES: image 1 puts a payload of four
! words (each the round number) into image 2 and runs sync images(2); image
! 2, after its sync images(1), reads the payload locally. Forbidden: any word
! other than the round's (the put before the image control statement not
! visible after it). A second pair of sync images returns the turn. The
! image pairs are (1,2), (3,4), ...; an odd last image idles. Exits 1 and
! prints the count on any forbidden outcome.
program mp_sync_images
  implicit none
  integer, parameter :: words = 4
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
        sync images(partner)
        sync images(partner)
      else
        sync images(partner)
        if (any(payload /= r)) bad = bad + 1
        sync images(partner)
      end if
    end do
  end if
  total = bad
  call co_sum(total)
  if (me == 1) then
    print '(a,i0,a,i0,a)', 'mp_sync_images: ', total, ' forbidden outcomes in ', rounds, ' rounds'
    if (total /= 0) error stop 1
    print '(a)', 'Test passed.'
  end if
end program
