! An atomic counter on image 1 incremented by every image: atomic_add of 1,
! n times per image, then SYNC ALL and a check of the total; the time per
! atomic_add as each image sees it. Argument: adds per image.
program atomic_counter
  use iso_fortran_env, only : int64, real64, atomic_int_kind
  implicit none
  integer(atomic_int_kind) :: counter[*]
  integer(int64) :: t0, t1, rate
  integer :: n, i, me, v
  character(len=16) :: arg
  n = 20000
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  me = this_image()
  counter = 0
  sync all
  call system_clock(t0, rate)
  do i = 1, n
    call atomic_add(counter[1], 1)
  end do
  call system_clock(t1)
  sync all
  if (me == 1) then
    call atomic_ref(v, counter)
    if (v /= n * num_images()) error stop 'atomic_counter: lost increments'
    print '(a,f10.3,a)', 'atomic_counter: ', real(t1 - t0, real64) / rate * 1d6 / n, &
      ' us per atomic_add to image 1 (every image adding)'
  end if
end program
