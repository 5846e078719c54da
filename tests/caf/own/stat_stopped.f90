! stat= on a stopped image: the last image ends at once (normal termination)
! while image 1 synchronises with it: sync images, and later sync all, give
! STAT_STOPPED_IMAGE instead of waiting forever; the image still running
! goes on and ends normally. Needs two images.
program stat_stopped
  use checks, only : fail
  use iso_fortran_env, only : stat_stopped_image
  implicit none
  integer :: st, me, np
  me = this_image()
  np = num_images()
  if (np < 2) error stop 'stat_stopped needs at least 2 images'
  if (me == np) stop
  if (me == 1) then
    st = -1
    sync images(np, stat=st)
    if (st /= stat_stopped_image) call fail('sync images with a stopped image: not STAT_STOPPED_IMAGE')
  end if
  st = -1
  sync all(stat=st)
  if (st /= stat_stopped_image) call fail('sync all with a stopped image: not STAT_STOPPED_IMAGE')
  if (me == 1) print '(a)', 'Test passed.'
end program
