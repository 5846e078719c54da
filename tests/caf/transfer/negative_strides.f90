! Coindexed transfers with negative strides (caf_send, caf_get,
! caf_sendget), on the coindexed side, the local side and both, 1-D and 2-D,
! with a kind conversion on the way, and a self-assignment through this
! image's own coindex whose sides overlap (as if the right side were read
! first). Runs at any number of images (at one image every neighbour is
! this image: the local path).
program negative_strides
  use checks, only : check, report_passed
  implicit none
  integer, parameter :: n = 10
  integer :: a(n)[*], b(n), m(4, 5)[*], mm(4, 5), old(4, 5), i, j
  integer :: me, np, nb, pv, bad
  real(8) :: r(n)[*]
  integer(2) :: h(n)[*]

  me = this_image()
  np = num_images()
  nb = mod(me, np) + 1
  pv = mod(me - 2 + np, np) + 1
  bad = 0
  a = [(100*me + i, i = 1, n)]
  m = reshape([(1000*me + i, i = 1, 20)], [4, 5])
  r = -1
  h = -1
  sync all

  ! GET of a backwards section.
  b = 0
  b(1:5) = a(9:1:-2)[nb]
  call check('get a(9:1:-2)', all(b(1:5) == [(100*nb + i, i = 9, 1, -2)]))

  ! GET into a backwards local section.
  b = 0
  b(n:1:-1) = a(:)[nb]
  call check('get into b(n:1:-1)', all(b == [(100*nb + n + 1 - i, i = 1, n)]))

  ! 2-D: forward section there, both dimensions backwards here.
  mm = 0
  mm(4:1:-1, 5:1:-2) = m(1:4, 1:5:2)[nb]
  do j = 1, 3
    do i = 1, 4
      if (mm(5 - i, 7 - 2*j) /= 1000*nb + i + 4*(2*j - 2)) bad = bad + 1
    end do
  end do
  call check('2-D get into backwards section', bad == 0)

  ! 2-D: backwards there (a GET of a sparse backwards section).
  mm = 0
  mm(:, 1:3) = m(4:1:-1, 5:1:-2)[nb]
  bad = 0
  do j = 1, 3
    do i = 1, 4
      if (mm(i, j) /= 1000*nb + (5 - i) + 4*(6 - 2*j)) bad = bad + 1
    end do
  end do
  call check('2-D get of backwards section', bad == 0)

  ! PUT into a backwards section with integer(4) -> real(8).
  r(n:1:-1)[nb] = a
  ! PUT of a backwards local section into a strided backwards one, kind 4 -> 2.
  h(n-1:1:-2)[nb] = a(1:5)
  sync all
  call check('put into r(n:1:-1) converting', all(r == [(real(100*pv + n + 1 - i, 8), i = 1, n)]))
  call check('put into h(n-1:1:-2) converting', &
       all(h(n-1:1:-2) == [(int(100*pv + i, 2), i = 1, 5)]) .and. all(h(n:2:-2) == -1))
  sync all

  ! SENDGET with negative strides on both coindexed sides (kind 4 -> 8).
  r = -1
  sync all
  r(1:n:2)[nb] = a(n:1:-2)[nb]
  sync all
  call check('sendget r(1:n:2)[nb] = a(n:1:-2)[nb]', &
       all(r(1:n:2) == [(real(100*me + i, 8), i = n, 1, -2)]) .and. all(r(2:n:2) == -1))
  sync all

  ! Self-assignment through this image's coindex; the sides overlap.
  old = m
  m(4:1:-1, :)[me] = m(:, 5:1:-1)
  call check('overlapping self send', all(m(4:1:-1, :) == old(:, 5:1:-1)))
  old = m
  m(:, 1:4)[me] = m(:, 2:5)[me]
  call check('overlapping self sendget', all(m(:, 1:4) == old(:, 2:5)) .and. all(m(:, 5) == old(:, 5)))
  a = [(i, i = 1, n)]
  a(n:2:-1)[me] = a(n-1:1:-1)
  call check('overlapping self send, shifted', all(a == [1, (i, i = 1, n - 1)]))

  call report_passed()
end program
