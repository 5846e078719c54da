! Litmus, message passing by SYNC MEMORY and an atomic flag (the standard's
! own pattern of user-defined ordering, F2018 11.6.5): image 1 puts a
! payload into image 3, runs SYNC MEMORY, then atomic_define(flag, r) on
! its OWN flag; image 2 spins with atomic_ref on flag[1] until it reads r,
! runs SYNC MEMORY, and gets the payload from image 3. Forbidden: a word
! not the round's. SYNC MEMORY is the one image control statement whose
! forcing is not followed by a writing atomic to another image, so this is
! where the library's own segment fence can carry the order alone: with
! CPU-route atomics (PGAS_AMO_VIA_AM=1) the flag's atomic_define is a CPU
! atomic on image 1's own word, and with the runtime's forcing before such
! atomics removed (PGAS_MCM_WEAKEN=local-amo-no-force) only SYNC MEMORY's
! quiet makes the put visible before the flag; the negative control
! PGAS_CAF_WEAKEN=no-segment-fence then removes that too. SYNC IMAGES
! returns the turn. Needs 3 images (others idle). The payload's size cycles
! through 1, 64, 1024 and 4096 words (the second argument sets the last).
! Prints the count; exits 1 on any forbidden outcome.
program mp_sync_memory
  use iso_fortran_env, only : atomic_int_kind
  implicit none
  integer(atomic_int_kind) :: flag[*]
  integer, allocatable :: payload(:)[:], src(:), buf(:)
  integer :: rounds, r, me, bad, total, words, n, v
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
  if (num_images() < 3) error stop 'mp_sync_memory needs at least 3 images'
  allocate (payload(words)[*], src(words), buf(words))
  payload = 0
  bad = 0
  call atomic_define(flag, 0)
  sync all
  do r = 1, rounds
    select case (me)
    case (1)
      n = size_of(r)
      src(1:n) = r
      payload(1:n)[3] = src(1:n)
      sync memory
      call atomic_define(flag, r)
      sync images(2)           ! image 2 has checked: next round
    case (2)
      do
        call atomic_ref(v, flag[1])
        if (v == r) exit
      end do
      sync memory
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
    print '(a,i0,a,i0,a)', 'mp_sync_memory: ', total, ' forbidden outcomes in ', rounds, ' rounds'
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
