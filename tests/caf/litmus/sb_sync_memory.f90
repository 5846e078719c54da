! Litmus, store buffering with SYNC MEMORY and atomics: image 1 runs
! atomic_define(x[2], 1); sync memory; atomic_ref(r1, y[1]), image 2 runs
! atomic_define(y[1], 1); sync memory; atomic_ref(r2, x[2]) (each reads the
! word the other writes, the reader's own). Forbidden: r1 == 0 and r2 == 0
! (both atomic stores still not performed after each image's SYNC MEMORY).
! SYNC ALL resets the words and separates rounds. Needs two images; pairs
! (1,2), (3,4), ...
program sb_sync_memory
  use iso_fortran_env, only : atomic_int_kind
  implicit none
  integer(atomic_int_kind) :: x[*], y[*]
  integer :: r1, r2, rounds, r, me, partner, bad, total, seen01, seen10, seen11
  integer :: obs[*]
  character(len=16) :: arg
  rounds = 5000
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) rounds
  end if
  me = this_image()
  if (num_images() < 2) error stop 'sb_sync_memory needs at least 2 images'
  partner = merge(me + 1, me - 1, mod(me, 2) == 1)
  if (partner > num_images()) partner = 0
  bad = 0
  seen01 = 0
  seen10 = 0
  seen11 = 0
  do r = 1, rounds
    call atomic_define(x, 0)
    call atomic_define(y, 0)
    sync all
    if (partner /= 0) then
      if (mod(me, 2) == 1) then
        ! x lives on the even image, y on the odd one (this image).
        call atomic_define(x[partner], 1)
        sync memory
        call atomic_ref(r1, y)
        obs = r1
      else
        call atomic_define(y[partner], 1)
        sync memory
        call atomic_ref(r2, x)
        obs = r2
      end if
    end if
    sync all
    if (partner /= 0 .and. mod(me, 2) == 1) then
      r2 = obs[partner]
      if (r1 == 0 .and. r2 == 0) bad = bad + 1
      if (r1 == 0 .and. r2 == 1) seen01 = seen01 + 1
      if (r1 == 1 .and. r2 == 0) seen10 = seen10 + 1
      if (r1 == 1 .and. r2 == 1) seen11 = seen11 + 1
    end if
    sync all
  end do
  total = bad
  call co_sum(total)
  if (me == 1) then
    print '(a,i0,a,i0,a,3(i0,a))', 'sb_sync_memory: ', total, ' forbidden outcomes in ', rounds, &
      ' rounds (allowed 0/1: ', seen01, ', 1/0: ', seen10, ', 1/1: ', seen11, ')'
    if (total /= 0) error stop 1
    print '(a)', 'Test passed.'
  end if
end program
