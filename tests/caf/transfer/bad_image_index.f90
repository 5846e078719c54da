! A coindex outside the current team: with stat= a GET sets a non-zero
! stat and errmsg and the program goes on; without, the job ends with a
! message naming the image index (the manifest checks the message and the
! exit status). Runs at any number of images.
program bad_image_index
  implicit none
  integer :: x(4)[*], y(4), s, bad

  x = this_image()
  bad = num_images() + 1000
  sync all
  s = 0
  y(1) = x(1)[bad, stat=s]
  if (s == 0) then
    print *, 'FAILED: a GET from image', bad, 'set no stat'
    error stop 2
  end if
  sync all
  ! No stat=: error termination naming the index.
  if (this_image() == 1) y = x(:)[bad]
  sync all
  print *, 'FAILED: a GET from image', bad, 'without stat= did not end the job'
end program
