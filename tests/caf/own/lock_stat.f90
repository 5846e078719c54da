! LOCK and UNLOCK with acquired_lock= and stat=: a lock held by image 1 is not
! acquired by image 2 (acquired_lock=.false.); locking it again on image 1
! gives STAT_LOCKED; unlocking it from image 2 gives STAT_LOCKED_OTHER_IMAGE;
! unlocking an unlocked lock gives STAT_UNLOCKED; once image 1 unlocks, image 2
! acquires it. Needs two images.
program lock_stat
  use checks, only : fail, report_passed
  use iso_fortran_env, only : lock_type, stat_locked, stat_unlocked, stat_locked_other_image
  implicit none
  type(lock_type) :: lck[*]
  logical :: got
  integer :: st, me
  me = this_image()
  if (num_images() < 2) error stop 'lock_stat needs at least 2 images'
  if (me == 1) lock(lck[1])
  sync all
  if (me == 2) then
    lock(lck[1], acquired_lock=got)
    if (got) call fail('acquired a lock that image 1 holds')
    call unlock_gives(stat_locked_other_image, 'unlock of a lock held by image 1: not STAT_LOCKED_OTHER_IMAGE')
  end if
  sync all
  if (me == 1) then
    st = -1
    lock(lck[1], stat=st)
    if (st /= stat_locked) call fail('lock of a lock this image holds: not STAT_LOCKED')
    unlock(lck[1])
    call unlock_gives(stat_unlocked, 'unlock of an unlocked lock: not STAT_UNLOCKED')
  end if
  sync all
  if (me == 2) then
    lock(lck[1], acquired_lock=got)
    if (.not. got) call fail('did not acquire the free lock')
    call unlock_gives(0, 'unlock of the held lock: stat not 0')
  end if
  call report_passed()
contains
  ! UNLOCK of image 1's lock with stat=: the stat must be want.
  subroutine unlock_gives(want, what)
    integer, intent(in) :: want
    character(*), intent(in) :: what
    st = -1
    unlock(lck[1], stat=st)
    if (st /= want) call fail(what)
  end subroutine
end program
