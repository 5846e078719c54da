! Large coindexed sections, so that every path of the transfer code runs:
! contiguous blocks (one PUT / GET), strided sections past the covering-span
! limit (the runtime's strided PUT / GET, more chunks than its window,
! backwards too), vector subscripts over a wide span (non-blocking runs),
! and a kind conversion of a large block. Runs at any number of images.
program large_sections
  use checks, only : check, report_passed
  implicit none
  integer, parameter :: n = 262144, nv = 5000, m = 512
  real(8), allocatable :: a(:)[:]
  real(4), allocatable :: g(:, :)[:]
  real(8), allocatable :: loc(:), got(:)
  real(4), allocatable :: g2(:, :)
  integer, allocatable :: idx(:)
  integer :: me, np, nb, pv, i, j, k, bad

  me = this_image()
  np = num_images()
  nb = mod(me, np) + 1
  pv = mod(me - 2 + np, np) + 1
  allocate(a(n)[*], g(m, m)[*], loc(n), got(n), g2(m, m), idx(nv))
  do i = 1, n
    a(i) = me*1.0d6 + i
  end do
  do j = 1, m
    do i = 1, m
      g(i, j) = real(me*1000 + mod(i + 7*j, 997), 4)
    end do
  end do
  ! Distinct indices spread over the whole array, in no order.
  do k = 1, nv
    idx(k) = 1 + mod(k*52361, n)
  end do
  sync all

  ! Contiguous GET of 2 MiB.
  got = a(:)[nb]
  call check('contiguous get', all(got == [(nb*1.0d6 + i, i = 1, n)]))

  ! Strided GET, backwards, sparse (span 2 MiB, data 256 KiB).
  got = 0
  got(1:n/8) = a(n:1:-8)[nb]
  call check('strided backwards get', all(got(1:n/8) == [(nb*1.0d6 + i, i = n, 1, -8)]))

  ! 2-D strided GET of whole columns, backwards (64 chunks of 2 KiB).
  g2 = 0
  g2(:, 1:m/8) = g(:, m:1:-8)[nb]
  bad = 0
  do j = 1, m/8
    do i = 1, m
      if (g2(i, j) /= real(nb*1000 + mod(i + 7*(m + 8 - 8*j), 997), 4)) bad = bad + 1
    end do
  end do
  call check('2-D strided get', bad == 0)

  ! Vector-subscripted GET over the whole span.
  got = 0
  got(1:nv) = a(idx)[nb]
  call check('vector get', all(got(1:nv) == nb*1.0d6 + idx))
  sync all

  ! Strided PUT of every third column (171 chunks: more than the window).
  g2 = -1
  g(:, 1:m:3)[nb] = g2(:, 1:m:3)
  ! Vector-subscripted PUT.
  loc(1:nv) = -me
  a(idx)[nb] = loc(1:nv)
  sync all
  bad = 0
  do j = 1, m
    do i = 1, m
      if (mod(j - 1, 3) == 0) then
        if (g(i, j) /= -1) bad = bad + 1
      else
        if (g(i, j) /= real(me*1000 + mod(i + 7*j, 997), 4)) bad = bad + 1
      end if
    end do
  end do
  call check('strided put', bad == 0)
  call check('vector put', all(a(idx) == -pv))
  sync all

  ! Contiguous PUT converting real(4) -> real(8) and a backwards strided
  ! PUT past the span limit.
  a(1:m*m)[nb] = reshape(g2, [m*m])
  a(n:1:-4)[nb] = [(real(-i, 8), i = 1, n/4)]
  sync all
  bad = 0
  do i = 1, n
    if (mod(n - i, 4) == 0) then
      if (a(i) /= -((n - i)/4 + 1)) bad = bad + 1
    else if (i <= m*m) then
      if (a(i) /= -1) bad = bad + 1
    end if
  end do
  call check('backwards strided put and converting put', bad == 0)

  call report_passed()
end program
