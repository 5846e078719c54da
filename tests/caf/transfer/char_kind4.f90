! Character kind 4 (UCS-4) through coindexed transfers: scalars and arrays,
! send / get / sendget, longer and shorter destinations (blank padded and
! truncated), strided and vector-subscripted sections, characters above
! 255, and kind 1 <-> kind 4 conversions. Runs at any number of images.
program char_kind4
  use checks, only : check, report_passed
  implicit none
  integer, parameter :: ucs4 = selected_char_kind('ISO_10646')
  character(kind=ucs4, len=6) :: w[*], wa(5)[*]
  character(kind=ucs4, len=3) :: s3, sa3(5)
  character(kind=ucs4, len=9) :: s9
  character(kind=1, len=6) :: n6[*]
  character(kind=1, len=4) :: n4
  character(kind=1, len=6) :: c6
  character(kind=ucs4, len=6) :: tmp(5)
  integer :: me, np, nb, pv, i, v(3)

  me = this_image()
  np = num_images()
  nb = mod(me, np) + 1
  pv = mod(me - 2 + np, np) + 1
  w = ucs4_'Gr' // char(int(z'00FC'), ucs4) // char(int(z'03A9'), ucs4) // ucs4_'-' // &
      char(48 + me, ucs4)
  do i = 1, 5
    wa(i) = repeat(char(int(z'4E00') + 10*me + i, ucs4), 6)
  end do
  n6 = 'abcd-' // achar(48 + me)
  sync all

  ! GET, shorter and longer destinations.
  s3 = w[nb]
  call check('get truncates', s3 == ucs4_'Gr' // char(int(z'00FC'), ucs4))
  s9 = w[nb]
  call check('get pads', s9(1:6) == expected_w(nb) .and. s9(7:9) == ucs4_'   ')

  ! GET of a strided section and of a vector-subscripted one.
  sa3 = ucs4_'?'
  sa3(1:3) = wa(1:5:2)[nb]
  call check('get strided', all([(sa3(i) == repeat(char(int(z'4E00') + 10*nb + 2*i - 1, ucs4), 3), &
       i = 1, 3)]))
  v = [5, 1, 3]
  tmp = ucs4_'x'
  tmp(1:3) = wa(v)[nb]
  call check('get vector', all([(tmp(i) == repeat(char(int(z'4E00') + 10*nb + v(i), ucs4), 6), &
       i = 1, 3)]))

  ! kind 4 -> kind 1 and kind 1 -> kind 4.
  n4 = w[nb]
  call check('get kind 4 to kind 1', n4(1:2) == 'Gr' .and. ichar(n4(3:3)) == int(z'FC'))
  s9 = n6[nb]
  call check('get kind 1 to kind 4', s9 == ucs4_'abcd-' // char(48 + nb, ucs4) // ucs4_'   ')
  sync all

  ! SEND: shorter source into a longer element (padded), strided and
  ! backwards, and a scalar to every element.
  wa(5:1:-2)[nb] = [(repeat(char(int(z'1F600') + i, ucs4), 3), i = 1, 3)]
  sync all
  call check('send pads', all([(wa(7 - 2*i) == repeat(char(int(z'1F600') + i, ucs4), 3) // &
       ucs4_'   ', i = 1, 3)]))
  call check('send leaves the rest', wa(2) == repeat(char(int(z'4E00') + 10*me + 2, ucs4), 6))
  sync all
  wa(:)[nb] = ucs4_'all'
  n6[nb] = w
  sync all
  call check('send broadcasts', all(wa == ucs4_'all   '))
  c6 = n6
  call check('send kind 4 to kind 1', c6(1:2) == 'Gr' .and. c6(5:6) == '-' // achar(48 + pv))
  sync all

  ! SENDGET between images, converting length.
  wa(2)[nb] = w[pv]
  sync all
  call check('sendget', wa(2) == expected_w(mod(pv - 2 + np, np) + 1))

  call report_passed()
contains
  function expected_w(img) result(r)
    integer, intent(in) :: img
    character(kind=ucs4, len=6) :: r
    r = ucs4_'Gr' // char(int(z'00FC'), ucs4) // char(int(z'03A9'), ucs4) // ucs4_'-' // &
        char(48 + img, ucs4)
  end function
end program
