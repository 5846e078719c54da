! References through derived types (the *_by_ref calls and is_present):
! every image reads and writes its neighbour's components through
! allocatable scalars, allocatable arrays with their own bounds, fixed-size
! array components, arrays of derived types (static, allocatable coarray,
! allocatable component), with sections, negative strides, vector
! subscripts, open ends, kind conversion and character padding, and checks
! ALLOCATED() of a component on another image. A failed check stops the job
! with ERROR STOP naming it; image 1 prints "Test passed." at the end.
! (The character component is not allocatable: gfortran 12 miscompiles a
! coarray's allocatable character component of fixed length, whose default
! initialisation writes through an unset pointer.)
program components
  implicit none

  type inner
    real, allocatable :: r
    integer :: tag
  end type

  type t
    integer :: i
    integer, allocatable :: s
    real :: vol(2, 5, 3)
    integer, allocatable :: m(:, :)
    character(len=5) :: name
    type(inner), allocatable :: arr(:)
    integer(kind=8), allocatable :: big(:)
  end type

  type(t) :: obj[*]
  type(t) :: st(3)[*]
  type(t), allocatable :: tarr(:)[:]
  integer :: me, np, nb, i, j
  integer, allocatable :: z(:, :)
  integer :: row(5), col(10), two(2, 3)
  real :: r2(2, 2), rv(5), x
  character(len=8) :: c8
  integer :: idx(4)
  integer(kind=2) :: k2(3)
  real(kind=8) :: d3(3)
  logical :: present

  me = this_image()
  np = num_images()
  nb = merge(1, me + 1, me == np)

  ! Each image's values depend on its index, so a read from the wrong
  ! image (or its own) is caught.
  obj%i = 100 * me
  allocate(obj%s, source=7 * me)
  obj%vol = reshape([(real(i + 1000 * me), i=1, 30)], [2, 5, 3])
  allocate(obj%m(0:9, 2:8))
  obj%m = reshape([(i + 1000 * me, i=1, 70)], [10, 7])
  obj%name = "ab" // achar(iachar("0") + mod(me, 10))
  allocate(obj%arr(3))
  obj%arr(:)%tag = [1, 2, 3] * me
  allocate(obj%arr(2)%r, source=1.5 * me)
  allocate(obj%big(-1:1), source=[(int(i, 8) * 10_8**5 * me, i=1, 3)])
  do i = 1, 3
    st(i)%i = 10 * i + me
    st(i)%vol = real(i * me)
  end do
  allocate(tarr(-1:2)[*])
  do i = -1, 2
    tarr(i)%i = i * me
  end do
  allocate(tarr(1)%s, source=-5 * me)
  sync all

  ! Allocatable scalar component.
  if (obj[nb]%s /= 7 * nb) error stop "get of an allocatable scalar"
  if (obj[nb]%i /= 100 * nb) error stop "get of a plain component"

  ! A fixed-size array component: a section of it.
  r2 = obj[nb]%vol(:, 2:4:2, 3)
  if (any(r2 /= reshape(real([23, 24, 27, 28] + 1000 * nb), [2, 2]))) &
    error stop "get of a section of an array component"
  rv = obj[nb]%vol(2, :, 1)
  if (any(rv /= real([2, 4, 6, 8, 10] + 1000 * nb))) error stop "get of a row of an array component"

  ! An allocatable array component with its own bounds: whole (the
  ! destination takes the component's shape and bounds), sections with
  ! negative strides, vector subscripts, open ends.
  z = obj[nb]%m
  if (any(shape(z) /= [10, 7])) error stop "reallocated destination's shape"
  if (any(lbound(z) /= [0, 2])) error stop "reallocated destination's bounds"
  if (any(z /= reshape([(i + 1000 * nb, i=1, 70)], [10, 7]))) error stop "get of a whole allocatable component"
  two = obj[nb]%m(1:7:4, 6:2:-2)
  if (any(two /= reshape([42, 46, 22, 26, 2, 6] + 1000 * nb, [2, 3]))) &
    error stop "get with a negative stride"
  idx = [9, 0, 3, 3]
  col(1:4) = obj[nb]%m(idx, 3)
  if (any(col(1:4) /= [20, 11, 14, 14] + 1000 * nb)) error stop "get with a vector subscript"
  col = -1
  col(1:5) = obj[nb]%m(5:, 4)
  if (any(col(1:5) /= [26, 27, 28, 29, 30] + 1000 * nb)) error stop "get with an open end"
  col(1:4) = obj[nb]%m(:3, 4)
  if (any(col(1:4) /= [21, 22, 23, 24] + 1000 * nb)) error stop "get with an open start"

  ! Kind conversion on the way in.
  k2 = obj[nb]%m(0:2, 8)
  if (any(k2 /= int([61, 62, 63] + 1000 * nb, 2))) error stop "get with kind conversion"
  d3 = obj[nb]%big
  if (any(d3 /= [(real(i, 8) * 1.0d5 * nb, i=1, 3)])) error stop "get integer(8) into real(8)"

  ! Character: blank padded to the destination's length.
  c8 = obj[nb]%name
  if (c8 /= "ab" // achar(iachar("0") + mod(nb, 10)) // "     ") error stop "get of a character component"

  ! Through an array of derived types inside the coarray, to an
  ! allocatable component of one element.
  if (obj[nb]%arr(3)%tag /= 3 * nb) error stop "get through an allocatable array of derived type"
  x = obj[nb]%arr(2)%r
  if (x /= 1.5 * nb) error stop "get of an allocatable component of an array element"
  present = allocated(obj[nb]%arr(2)%r)
  if (.not. present) error stop "ALLOCATED of an allocated component on another image"
  present = allocated(obj[nb]%arr(1)%r)
  if (present) error stop "ALLOCATED of an unallocated component on another image"
  if (.not. allocated(obj[nb]%m)) error stop "ALLOCATED of an allocated array component"

  ! Arrays of derived type: a static coarray and an allocatable one.
  if (st(3)[nb]%i /= 30 + nb) error stop "get from a static array of derived type"
  if (st(2)[nb]%vol(1, 4, 2) /= real(2 * nb)) error stop "get of a component of a static array element"
  if (tarr(2)[nb]%i /= 2 * nb) error stop "get from an allocatable array coarray of derived type"
  if (tarr(-1)[nb]%i /= -nb) error stop "get from an allocatable array coarray (lower bound)"
  if (tarr(1)[nb]%s /= -5 * nb) error stop "get of an allocatable component of an array coarray element"
  if (allocated(tarr(0)[nb]%s)) error stop "ALLOCATED in an array coarray element"

  sync all

  ! Sends: each image writes into its neighbour's components.
  obj[nb]%s = 3 * me
  obj[nb]%m(2, :) = real([(j, j=1, 7)]) + 0.25      ! real to integer
  obj[nb]%m(9:1:-4, 8) = [-1, -2, -3]
  obj[nb]%vol(1, :, 3) = -real(me)
  obj[nb]%arr(2)%r = 2.5 * me
  row = [5, 4, 3, 2, 1] * me
  obj[nb]%m(0, 2:6) = row
  st(1)[nb]%i = -me
  tarr(1)[nb]%s = 9 * me
  sync all
  ! `prev` wrote here.
  j = merge(np, me - 1, me == 1)
  if (obj%s /= 3 * j) error stop "send to an allocatable scalar"
  if (any(obj%m(2, :) /= [(i, i=1, 7)])) error stop "send of a row with conversion"
  if (any(obj%m([9, 5, 1], 8) /= [-1, -2, -3])) error stop "send with a negative stride"
  if (any(obj%vol(1, :, 3) /= -real(j))) error stop "send to a row of an array component"
  if (obj%arr(2)%r /= 2.5 * j) error stop "send to a component of an array element"
  if (any(obj%m(0, 2:6) /= [5, 4, 3, 2, 1] * j)) error stop "send of an array"
  if (st(1)%i /= -j) error stop "send to a static array of derived type"
  if (tarr(1)%s /= 9 * j) error stop "send to an array coarray element's component"
  sync all

  ! Image to image (sendget), with a kind conversion: each image copies
  ! its next neighbour's integer(8) array into its previous neighbour's
  ! row, so this image receives from `nb` the array of `nb`'s next.
  obj[j]%m(3, 2:4) = obj[nb]%big
  sync all
  i = merge(1, nb + 1, nb == np)
  if (any(obj%m(3, 2:4) /= [1, 2, 3] * 100000 * i)) error stop "sendget between two other images"
  sync all

  if (me == 1) print *, "Test passed."
end program
