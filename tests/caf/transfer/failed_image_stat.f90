! A GET from a failed image with stat= gives STAT_FAILED_IMAGE and the
! program goes on; GETs from live images still work. Needs 3 images.
program failed_image_stat
  use iso_fortran_env, only: STAT_FAILED_IMAGE
  implicit none
  integer :: x(8)[*], y(8), s, me, np, i

  me = this_image()
  np = num_images()
  if (np < 3) error stop 'failed_image_stat needs at least 3 images'
  x = [(me*10 + i, i = 1, 8)]
  sync all
  if (me == 2) fail image
  sync all (stat=s)
  if (s /= STAT_FAILED_IMAGE) then
    print *, 'image', me, ': FAILED: sync all with a failed image gave stat', s
    error stop 1
  end if
  s = 0
  y = -1
  y(1:4) = x(1:8:2)[2, stat=s]
  if (s /= STAT_FAILED_IMAGE) then
    print *, 'image', me, ': FAILED: GET from the failed image gave stat', s
    error stop 1
  end if
  s = -1
  y = x(:)[mod(me, np) + 1 + merge(1, 0, mod(me, np) + 1 == 2), stat=s]
  if (s /= 0 .or. any(y /= [(10*(mod(me, np) + 1 + merge(1, 0, mod(me, np) + 1 == 2)) + i, &
      i = 1, 8)])) then
    print *, 'image', me, ': FAILED: GET from a live image, stat', s
    error stop 1
  end if
  sync all (stat=s)
  if (me == 1) print *, 'Test passed.'
end program
