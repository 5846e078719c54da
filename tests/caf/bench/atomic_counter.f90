! An atomic counter on image 1 incremented by every image: atomic_add of 1,
! n times per image, then SYNC ALL and a check of the total; the time per
! atomic_add as each image sees it. Argument: adds per image.
program atomic_counter
  use bench_util, only : int_arg, us_per
  use iso_fortran_env, only : int64, real64, atomic_int_kind
  implicit none
  integer(atomic_int_kind) :: counter[*]
  integer(int64) :: t0, t1
  integer :: n, i, me, v
  n = int_arg(1, 20000)
  me = this_image()
  counter = 0
  sync all
  call system_clock(t0)
  do i = 1, n
    call atomic_add(counter[1], 1)
  end do
  call system_clock(t1)
  sync all
  if (me == 1) then
    call atomic_ref(v, counter)
    if (v /= n * num_images()) error stop 'atomic_counter: lost increments'
    print '(a,f10.3,a)', 'atomic_counter: ', us_per(t0, t1, n), &
      ' us per atomic_add to image 1 (every image adding)'
  end if
end program
