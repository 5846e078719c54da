! co_sum / co_min / co_max / co_broadcast over every intrinsic kind the
! library reduces (integer 1/2/4/8/16, real 4/8, complex 4/8, character
! kinds 1 and 4), scalars and arrays, with and without result_image, and a
! non-contiguous rank-3 section with a negative stride.
program co_kinds
  use checks, only : fail, report_passed
  implicit none
  integer, parameter :: ucs4 = selected_char_kind('ISO_10646')
  integer(1) :: i1
  integer(2) :: i2
  integer(4) :: i4(3)
  integer(8) :: i8
  integer(16) :: i16
  real(4) :: r4(2)
  real(8) :: r8
  complex(4) :: z4
  complex(8) :: z8(2)
  character(len=3) :: c1
  character(len=2, kind=ucs4) :: c4
  integer :: a3(4, 3, 5), expect3(4, 3, 5), i, j, k
  logical :: l(2)
  integer :: me, np, s, src
  character(len=30) :: msg
  me = this_image()
  np = num_images()
  src = min(2, np)

  i1 = int(me, 1); call co_sum(i1)
  if (i1 /= np * (np + 1) / 2) call fail('co_sum integer(1)')
  i2 = int(-me, 2); call co_min(i2)
  if (i2 /= -np) call fail('co_min integer(2)')
  i4 = [me, -me, 10 * me]; call co_max(i4)
  if (any(i4 /= [np, -1, 10 * np])) call fail('co_max integer(4) array')
  i8 = 2_8**40 * me; call co_sum(i8, result_image=np, stat=s)
  if (s /= 0) call fail('co_sum stat')
  if (me == np .and. i8 /= 2_8**40 * (np * (np + 1) / 2)) call fail('co_sum integer(8) result_image')
  i16 = 2_16**100 + me; call co_sum(i16)
  if (i16 /= np * 2_16**100 + np * (np + 1) / 2) call fail('co_sum integer(16)')
  i16 = -2_16**90 * me; call co_min(i16)
  if (i16 /= -2_16**90 * np) call fail('co_min integer(16)')
  r4 = [real(me), -0.5 * me]; call co_sum(r4)
  if (any(r4 /= [real(np * (np + 1) / 2), -0.25 * np * (np + 1)])) call fail('co_sum real(4)')
  r8 = 1.5d0 * me; call co_max(r8, result_image=1)
  if (me == 1 .and. r8 /= 1.5d0 * np) call fail('co_max real(8) result_image')
  z4 = cmplx(me, -me); call co_sum(z4)
  if (z4 /= cmplx(np * (np + 1) / 2, -np * (np + 1) / 2)) call fail('co_sum complex(4)')
  z8 = [cmplx(me, 2 * me, 8), cmplx(0, me, 8)]; call co_sum(z8)
  if (any(z8 /= [cmplx(np * (np + 1) / 2, np * (np + 1), 8), cmplx(0, np * (np + 1) / 2, 8)])) &
    call fail('co_sum complex(8) array')
  write (c1, '(a,i2.2)') 'c', me; call co_max(c1)
  if (c1 /= 'c' // achar(48 + np / 10) // achar(48 + mod(np, 10))) call fail('co_max character')
  write (c1, '(a,i2.2)') 'c', me; call co_min(c1)
  if (c1 /= 'c01') call fail('co_min character')
  ! A local ERRMSG= variable: gfortran 12 passes it by value, which shifts
  ! the character length into the errmsg argument.
  write (c1, '(a,i2.2)') 'c', me; call co_min(c1, stat=s, errmsg=msg)
  if (s /= 0 .or. c1 /= 'c01') call fail('co_min character with errmsg=')
  ! Code units 1ff and 2xx: byte order (little-endian) and code-unit
  ! order disagree, so a wrong kind shows.
  c4 = char(merge(int(z'1ff'), int(z'200') + me, me == 1), ucs4) // ucs4_'x'
  call co_max(c4, stat=s, errmsg=msg)
  if (s /= 0 .or. c4 /= char(merge(int(z'1ff'), int(z'200') + np, np == 1), ucs4) // ucs4_'x') &
    call fail('co_max character(kind=4) with errmsg=')
  c4 = char(int(z'4e00') + me, ucs4) // ucs4_'x'; call co_max(c4)
  if (c4 /= char(int(z'4e00') + np, ucs4) // ucs4_'x') call fail('co_max character(kind=4)')
  c4 = char(int(z'4e00') + me, ucs4) // ucs4_'x'; call co_min(c4)
  if (c4 /= char(int(z'4e01'), ucs4) // ucs4_'x') call fail('co_min character(kind=4)')

  ! A non-contiguous section with a negative stride: a3(4:1:-3, :, 1:5:2).
  a3 = 0
  expect3 = 0
  do k = 1, 5
    do j = 1, 3
      do i = 1, 4
        a3(i, j, k) = me * (i + 10 * j + 100 * k)
        expect3(i, j, k) = a3(i, j, k)
      end do
    end do
  end do
  call co_sum(a3(4:1:-3, :, 1:5:2))
  expect3(4:1:-3, :, 1:5:2) = expect3(4:1:-3, :, 1:5:2) / me * (np * (np + 1) / 2)
  if (any(a3 /= expect3)) call fail('co_sum of a strided section (or it wrote outside it)')

  ! co_broadcast from image 2 (1 alone): character array, logical, complex,
  ! a section.
  block
    character(len=5) :: words(3)
    if (me == src) then
      words = ['alpha', 'beta ', 'gamma']
      l = [.true., .false.]
      z8 = [(1, 2), (3, 4)]
    else
      words = 'xxxxx'
      l = .false.
      z8 = 0
    end if
    call co_broadcast(words, src)
    call co_broadcast(l, source_image=src)
    call co_broadcast(z8, src)
    if (any(words /= ['alpha', 'beta ', 'gamma'])) call fail('co_broadcast character array')
    if (.not. l(1) .or. l(2)) call fail('co_broadcast logical')
    if (any(z8 /= [(1d0, 2d0), (3d0, 4d0)])) call fail('co_broadcast complex(8)')
    a3 = me
    call co_broadcast(a3(::2, 2, :), np)
    if (any(a3(::2, 2, :) /= np) .or. (me /= np .and. any(a3(2::2, :, :) /= me))) &
      call fail('co_broadcast of a section')
  end block

  call report_passed()
end program
