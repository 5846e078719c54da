! co_reduce with OPERATIONs of every calling convention gfortran uses:
! integer and logical kinds by reference, VALUE arguments, real(4) and
! real(8), complex(8) (returned in two registers), integer(16) (rax:rdx),
! real(10) (returned on the x87 stack) and real(16) (returned in xmm0;
! both have 16-byte descriptors), character (result by reference with
! hidden lengths), to every image and to a result_image. The operation is
! not commutative where it can be (first-minus-second), which checks the
! combining order: image order, ((a1 op a2) op a3) op a4.
module ops
  implicit none
  integer, parameter :: ep = selected_real_kind(18), qp = selected_real_kind(30)
contains
  pure integer(1) function add1(a, b)
    integer(1), intent(in) :: a, b
    add1 = a + b
  end function
  pure integer(2) function add2(a, b)
    integer(2), intent(in) :: a, b
    add2 = a + b
  end function
  pure integer(8) function sub8(a, b)
    integer(8), intent(in) :: a, b
    sub8 = a - b
  end function
  pure integer(16) function mul16(a, b)
    integer(16), intent(in) :: a, b
    mul16 = a * b
  end function
  pure integer function subv(a, b)
    integer, value :: a, b
    subv = a - b
  end function
  pure logical function lor(a, b)
    logical, intent(in) :: a, b
    lor = a .or. b
  end function
  pure real(4) function sub4(a, b)
    real(4), intent(in) :: a, b
    sub4 = a - b
  end function
  pure real(8) function subv8(a, b)
    real(8), value :: a, b
    subv8 = a - b
  end function
  pure complex(8) function cmul(a, b)
    complex(8), intent(in) :: a, b
    cmul = a * b
  end function
  pure real(ep) function subep(a, b)
    real(ep), intent(in) :: a, b
    subep = a - b
  end function
  pure real(qp) function subqp(a, b)
    real(qp), intent(in) :: a, b
    subqp = a - b
  end function
  pure function later(a, b) result(c)
    character(len=4), intent(in) :: a, b
    character(len=4) :: c
    c = a(1:2) // b(3:4)
  end function
end module

program co_reduce_kinds
  use checks, only : fail, report_passed
  use ops
  implicit none
  integer(1) :: i1
  integer(2) :: i2(2)
  integer(8) :: i8
  integer(16) :: i16
  integer :: iv
  logical :: l(3)
  real(4) :: r4
  real(8) :: r8
  complex(8) :: z
  real(ep) :: e, e_want
  real(qp) :: q, q_want
  character(len=4) :: s
  integer :: me, np, k, st
  ! A local ERRMSG= (gfortran 12 passes it by value: the library must find
  ! the character length in the errmsg argument).
  character(len=20) :: msg

  me = this_image()
  np = num_images()

  i1 = int(me, 1); call co_reduce(i1, add1)
  if (i1 /= np * (np + 1) / 2) call fail('co_reduce of integer(1)')
  i2 = [int(me, 2), int(2 * me, 2)]; call co_reduce(i2, add2, result_image=min(2, np))
  if (me == min(2, np) .and. any(i2 /= [np * (np + 1) / 2, np * (np + 1)])) call fail('co_reduce of integer(2) result_image')
  ! first-minus-second in image order: 1 - 2 - 3 - ... - np
  i8 = me; call co_reduce(i8, sub8)
  if (i8 /= 1 - (np * (np + 1) / 2 - 1)) call fail('co_reduce of integer(8) order')
  iv = me; call co_reduce(iv, subv)
  if (iv /= 1 - (np * (np + 1) / 2 - 1)) call fail('co_reduce of integer VALUE')
  i16 = 2_16**20 * me; call co_reduce(i16, mul16)
  if (i16 /= 2_16**(20 * np) * product([(int(k, 16), k = 1, np)])) call fail('co_reduce of integer(16)')
  l = [me == np, .false., .true.]; call co_reduce(l, lor)
  if (.not. l(1) .or. l(2) .or. .not. l(3)) call fail('co_reduce of logical')
  r4 = me; call co_reduce(r4, sub4)
  if (r4 /= real(1 - (np * (np + 1) / 2 - 1))) call fail('co_reduce of real(4) order')
  r8 = me; call co_reduce(r8, subv8)
  if (r8 /= dble(1 - (np * (np + 1) / 2 - 1))) call fail('co_reduce of real(8) VALUE')
  z = (0d0, 1d0); call co_reduce(z, cmul)
  if (z /= (0d0, 1d0)**np) call fail('co_reduce of complex(8)')
  e = 1.0_ep / 3 * me; call co_reduce(e, subep)
  e_want = 1.0_ep / 3
  do k = 2, np
    e_want = e_want - 1.0_ep / 3 * k
  end do
  if (e /= e_want) call fail('co_reduce of real(10)')
  q = 1.0_qp / 3 * me; call co_reduce(q, subqp, result_image=1)
  q_want = 1.0_qp / 3
  do k = 2, np
    q_want = q_want - 1.0_qp / 3 * k
  end do
  if (me == 1 .and. q /= q_want) call fail('co_reduce of real(16)')
  write (s, '(i2.2,i2.2)') me, me; call co_reduce(s, later, stat=st, errmsg=msg)
  if (st /= 0) call fail('co_reduce of character stat')
  if (s /= '01' // s(3:4) .or. s(3:4) /= achar(48 + np / 10) // achar(48 + mod(np, 10))) &
    call fail('co_reduce of character')

  call report_passed()
end program
