! A collective with a stopped image in the team: with stat= it returns
! STAT_STOPPED_IMAGE instead of waiting forever for the stopped image
! (co_sum, co_broadcast, co_reduce, co_max), and the images still running
! go on. The last image stops at once; the others learn it at a SYNC ALL.
program co_stat_stopped
  use checks, only : fail
  use iso_fortran_env, only : stat_stopped_image
  implicit none
  integer :: st, me, np, x
  character(len=40) :: msg
  me = this_image()
  np = num_images()
  if (np < 2) error stop 'co_stat_stopped needs at least 2 images'
  if (me == np) stop
  st = -1
  sync all(stat=st)
  if (st /= stat_stopped_image) call fail('sync all: not STAT_STOPPED_IMAGE')
  x = me
  st = -1
  msg = ''
  ! gfortran 12 passes a local ERRMSG= variable of a collective by value
  ! (the library cannot write it; it must not crash), a dummy by address.
  call co_sum(x, stat=st, errmsg=msg)
  if (st /= stat_stopped_image) call fail('co_sum: not STAT_STOPPED_IMAGE')
  st = -1
  call sum_with_errmsg(msg)
  if (st /= stat_stopped_image) call fail('co_sum: not STAT_STOPPED_IMAGE')
  if (index(msg, 'CO_SUM') == 0) call fail('co_sum: no errmsg')
  st = -1
  call co_broadcast(x, 1, stat=st)
  if (st /= stat_stopped_image) call fail('co_broadcast: not STAT_STOPPED_IMAGE')
  st = -1
  call co_reduce(x, add, stat=st)
  if (st /= stat_stopped_image) call fail('co_reduce: not STAT_STOPPED_IMAGE')
  st = -1
  call co_max(x, result_image=1, stat=st)
  if (st /= stat_stopped_image) call fail('co_max: not STAT_STOPPED_IMAGE')
  if (x /= me) call fail('a failed collective changed its argument')
  if (me == 1) print '(a)', 'Test passed.'
contains
  subroutine sum_with_errmsg(m)
    character(len=*), intent(inout) :: m
    call co_sum(x, stat=st, errmsg=m)
  end subroutine
  pure integer function add(a, b)
    integer, intent(in) :: a, b
    add = a + b
  end function
end program
