! Collective results are the same bits on every image and follow image
! order: a co_sum whose value depends on the order of the additions
! (1e16 + 1 + 1 + 1 rounds differently from 1 + 1 + 1 + 1e16) equals
! ((a1 + a2) + a3) + ... computed here, on every image; a large real(8)
! co_sum (2**20 elements, the runtime's allreduce) and a strided one to a
! result_image are checked element by element against the same sum.
program co_order
  use checks, only : fail, report_passed
  implicit none
  integer, parameter :: n = 2**20
  real(8) :: x, want, y
  real(8), allocatable :: big(:), v(:)
  real(4) :: h(6)
  integer :: me, np, k, i
  me = this_image()
  np = num_images()

  x = merge(1d16, 1d0, me == 1)
  call co_sum(x)
  want = 1d16
  do k = 2, np
    want = want + 1d0
  end do
  if (x /= want) call fail('co_sum not in image order')
  y = x
  call co_broadcast(y, 1)
  if (transfer(y, 0_8) /= transfer(x, 0_8)) call fail('co_sum bits differ between images')

  allocate(big(n), v(n))
  do i = 1, n
    big(i) = me + i * 1d-3 / 7
  end do
  call co_sum(big)
  do i = 1, n
    v(i) = 1 + i * 1d-3 / 7
  end do
  do k = 2, np
    do i = 1, n
      v(i) = v(i) + (k + i * 1d-3 / 7)
    end do
  end do
  if (any(big /= v)) call fail('large co_sum')

  do i = 1, n
    big(i) = -me * i
  end do
  call co_min(big(::3), result_image=np)
  if (me == np) then
    if (any(big(::3) /= [(-np * i, i = 1, n, 3)])) call fail('strided co_min to result_image')
    if (any(big(2::3) /= [(-np * i, i = 2, n, 3)])) call fail('co_min wrote outside the section')
  end if

  h = [(real(me) / i, i = 1, 6)]
  call co_sum(h(6:1:-1), result_image=1)
  if (me == 1) then
    do i = 1, 6
      x = 1.0 / i
      do k = 2, np
        x = real(x, 4) + real(k, 4) / i
      end do
      if (h(i) /= real(x, 4)) call fail('real(4) co_sum, reversed section')
    end do
  end if

  call report_passed()
end program
