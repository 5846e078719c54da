! Litmus, message passing by LOCK / UNLOCK: every image, rounds times, takes
! the lock on image 1 and inside it gets two words a and b from image 1, checks
! a == b and puts a+1 into both (a then b). Forbidden: a /= b inside the lock
! (a holder's puts before UNLOCK not visible to the next holder's gets after
! LOCK), and a final count other than images * rounds (a lost update).
program mp_lock
  use iso_fortran_env, only : lock_type
  implicit none
  type(lock_type) :: lck[*]
  integer :: a[*], b[*], rounds, r, va, vb, bad, total, me
  character(len=16) :: arg
  rounds = 5000
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) rounds
  end if
  me = this_image()
  a = 0
  b = 0
  bad = 0
  sync all
  do r = 1, rounds
    lock(lck[1])
    va = a[1]
    vb = b[1]
    if (va /= vb) bad = bad + 1
    a[1] = va + 1
    b[1] = va + 1
    unlock(lck[1])
  end do
  sync all
  total = bad
  call co_sum(total)
  if (me == 1) then
    if (a /= num_images() * rounds) total = total + abs(num_images() * rounds - a)
    print '(a,i0,a,i0,a,i0)', 'mp_lock: ', total, ' forbidden outcomes in ', rounds, ' rounds per image; count ', a
    if (total /= 0) error stop 1
    print '(a)', 'Test passed.'
  end if
end program
