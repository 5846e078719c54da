! Vector subscripts on the coindexed side and on the local side at once,
! for send and get, with repeated and unordered indices on the right.
program vector_subscripts
  use checks, only : fail, report_passed
  implicit none
  real(8) :: a(8)[*], b(8)
  integer :: src_idx(4), dst_idx(4), i, me, peer
  real(8) :: want(8)
  me = this_image()
  peer = merge(1, me + 1, me == num_images())
  src_idx = [7, 2, 2, 5]   ! repeated index on the right-hand side is allowed
  dst_idx = [8, 1, 4, 3]   ! distinct (a left-hand side needs distinct indices)
  b = [(me * 10.0d0 + i, i = 1, 8)]
  a = -1
  sync all
  a(dst_idx)[peer] = b(src_idx)
  sync all
  want = -1
  want(dst_idx) = [(merge(num_images(), me - 1, me == 1) * 10.0d0 + src_idx(i), i = 1, 4)]
  if (any(a /= want)) call fail('send a(vector)[peer] = b(vector)')
  sync all
  a = [(me * 100.0d0 + i, i = 1, 8)]
  sync all
  b = 0
  b(dst_idx) = a(src_idx)[peer]
  want = 0
  want(dst_idx) = [(peer * 100.0d0 + src_idx(i), i = 1, 4)]
  if (any(b /= want)) call fail('get b(vector) = a(vector)[peer]')
  call report_passed()
end program
