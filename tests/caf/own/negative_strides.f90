! Array sections with negative strides on the coindexed side and on the
! local side, in one and two dimensions, for send and get.
program negative_strides
  use checks, only : fail, report_passed
  implicit none
  integer :: a(10)[*], m(6, 5)[*]
  integer :: loc(5), want(10), lm(3, 2), i, j, me, peer
  me = this_image()
  peer = merge(1, me + 1, me == num_images())
  a = 0
  m = 0
  sync all
  ! Send to a reversed, strided section: a(10), a(8), ..., a(2) on the peer.
  a(10:1:-2)[peer] = [(100 * me + i, i = 1, 5)]
  ! Send to a 2-D section with a negative stride in each dimension.
  m(6:2:-2, 5:1:-4)[peer] = reshape([(me * 1000 + i, i = 1, 6)], [3, 2])
  sync all
  peer = merge(num_images(), me - 1, me == 1)   ! who wrote to me
  want = 0
  want(10:1:-2) = [(100 * peer + i, i = 1, 5)]
  if (any(a /= want)) call fail('send to a(10:1:-2)')
  do j = 1, 5
    do i = 1, 6
      if (mod(i, 2) == 0 .and. (j == 5 .or. j == 1)) then
        if (m(i, j) /= peer * 1000 + (6 - i) / 2 + 1 + merge(0, 3, j == 5)) call fail('send to m(6:2:-2,5:1:-4)')
      else if (m(i, j) /= 0) then
        call fail('send to m touched an element outside the section')
      end if
    end do
  end do
  sync all
  a = [(me * 10 + i, i = 1, 10)]
  m = reshape([(me * 100 + i, i = 1, 30)], [6, 5])
  sync all
  peer = merge(1, me + 1, me == num_images())
  ! Get a reversed, strided section into a contiguous one, then into a
  ! reversed local section.
  loc = a(9:1:-2)[peer]
  if (any(loc /= [(peer * 10 + i, i = 9, 1, -2)])) call fail('get a(9:1:-2)')
  loc = 0
  loc(5:1:-1) = a(1:9:2)[peer]
  if (any(loc /= [(peer * 10 + i, i = 9, 1, -2)])) call fail('get into loc(5:1:-1)')
  lm = m(5:1:-2, 4:1:-3)[peer]
  do j = 1, 2
    do i = 1, 3
      if (lm(i, j) /= peer * 100 + (5 - 2 * (i - 1)) + 6 * ((4 - 3 * (j - 1)) - 1)) call fail('get m(5:1:-2,4:1:-3)')
    end do
  end do
  call report_passed()
end program
