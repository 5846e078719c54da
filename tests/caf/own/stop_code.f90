! STOP with a code on every image: the job's exit status is the code (3),
! after every image has reached its STOP (the standard's normal termination
! synchronises the images). Judged by the runner: exit status 3 and "STOP 3".
program stop_code
  implicit none
  integer :: x[*]
  x = this_image()
  sync all
  if (x[merge(1, this_image() + 1, this_image() == num_images())] < 1) error stop 'bad value'
  stop 3
end program
