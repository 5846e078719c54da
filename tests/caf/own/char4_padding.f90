! Character kind 4 (ISO 10646) through the coarray ABI: a shorter value put
! into a longer coindexed object is padded with kind-4 blanks, a longer one
! got into a shorter variable is truncated, a get into a longer one padded,
! and default-kind characters are converted to kind 4 on the way (send and
! get, scalars and array elements).
program char4_padding
  use checks, only : fail, report_passed
  implicit none
  integer, parameter :: ucs4 = selected_char_kind('ISO_10646')
  character(kind=ucs4, len=8) :: s[*], arr(3)[*]
  character(kind=ucs4, len=3) :: short
  character(kind=ucs4, len=10) :: longer
  character(kind=1, len=5) :: ascii
  integer :: me, peer, i
  me = this_image()
  peer = merge(1, me + 1, me == num_images())
  s = ucs4_'????????'
  arr = ucs4_'########'
  sync all
  ! Send a 3-character kind-4 value into the 8-character coarray of the peer.
  short = ucs4_'a' // char(int(z'4E2D'), ucs4) // ucs4_'z'
  s[peer] = short
  ! Send default-kind characters into kind-4 array elements (converted, padded).
  ascii = 'hello'
  arr(2)[peer] = ascii
  sync all
  if (s /= short // ucs4_'     ') call fail('kind-4 send not padded with blanks')
  if (len_trim(s) /= 3) call fail('kind-4 send: wrong trimmed length')
  if (arr(2) /= ucs4_'hello   ') call fail('kind-1 to kind-4 send not converted and padded')
  if (arr(1) /= ucs4_'########' .or. arr(3) /= ucs4_'########') call fail('neighbour elements overwritten')
  sync all
  ! Get: a longer kind-4 value into a shorter variable is truncated.
  s = ucs4_'ABCDEFGH'
  sync all
  short = s[peer]
  if (short /= ucs4_'ABC') call fail('kind-4 get not truncated')
  ! (Not a substring of the coindexed object: gfortran 12 passes the whole
  ! string's length, 32 bytes, as the source's element length of s[p](2:4).)
  longer = s[peer]
  if (longer /= ucs4_'ABCDEFGH  ' .or. len_trim(longer) /= 8) call fail('kind-4 get not padded')
  do i = 1, 3
    longer = arr(i)[peer]
    if (longer(1:1) /= merge(ucs4_'h', ucs4_'#', i == 2) .or. longer(9:10) /= ucs4_'  ') call fail('array element get')
  end do
  call report_passed()
end program
