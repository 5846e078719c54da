! ERROR STOP with a code on the last image while the others wait in SYNC ALL
! (which would never complete): the whole job ends, its exit status is the
! code (7), no hang. Judged by the runner: exit status 7 and "ERROR STOP 7".
program error_stop_code
  implicit none
  if (this_image() == num_images()) error stop 7
  sync all
  print '(a)', 'Test failed: sync all completed after an image ERROR STOPped'
end program
