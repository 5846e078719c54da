! co_reduce with a user's function on a derived type (an integer, a real(8)
! and a fixed character), to every image and to one result_image.
module pair_ops
  implicit none
  type :: pair
    integer :: n
    real(8) :: x
    character(len=4) :: tag
  end type
contains
  pure function combine(a, b) result(c)
    type(pair), intent(in) :: a, b
    type(pair) :: c
    c%n = a%n + b%n
    c%x = max(a%x, b%x)
    c%tag = merge(a%tag, b%tag, a%tag < b%tag)
  end function
end module

program co_reduce_derived
  use checks, only : fail, report_passed
  use pair_ops
  implicit none
  type(pair) :: v, w(3)
  integer :: me, np, i
  character(len=4) :: t
  me = this_image()
  np = num_images()
  write (t, '(a,i3.3)') 'i', np + 1 - me
  v = pair(me, dble(me) * 1.5d0, t)
  call co_reduce(v, combine)
  write (t, '(a,i3.3)') 'i', 1
  if (v%n /= np * (np + 1) / 2 .or. v%x /= dble(np) * 1.5d0 .or. v%tag /= t) call fail('co_reduce to all')
  w = [(pair(me * i, dble(me + i), 'zzzz'), i = 1, 3)]
  call co_reduce(w, combine, result_image=np)
  if (me == np) then
    do i = 1, 3
      if (w(i)%n /= i * np * (np + 1) / 2 .or. w(i)%x /= dble(np + i)) call fail('co_reduce to result_image')
    end do
  end if
  call report_passed()
end program
