! Assignment to an allocatable component of another image allocates it
! there when unallocated, and reallocates an array of another shape, as an
! assignment to an allocatable does (Fortran 2008 7.2.1.3); the owner then
! sees it allocated, with the values and bounds, and can deallocate it.
! Every image assigns into its neighbour's components; a failed check stops
! the job with ERROR STOP naming it; image 1 prints "Test passed."
program remote_alloc
  implicit none

  type inner
    real, allocatable :: r
  end type

  type t
    integer, allocatable :: s
    integer, allocatable :: v(:)
    real(kind=8), allocatable :: m(:, :)
    type(inner), allocatable :: arr(:)
  end type

  type(t) :: obj[*]
  integer :: me, np, nb, prev, i

  me = this_image()
  np = num_images()
  nb = merge(1, me + 1, me == np)
  prev = merge(np, me - 1, me == 1)

  allocate(obj%arr(3))
  sync all
  if (allocated(obj[nb]%s)) error stop "a component allocated before any assignment"

  ! Unallocated there: allocated by the assignment.
  obj[nb]%s = 10 * me
  obj[nb]%v = [(i * me, i=1, me + 2)]
  obj[nb]%m = reshape([(real(i, 8), i=1, 6)], [3, 2]) * me
  obj[nb]%arr(2)%r = 1.5 * me
  if (.not. allocated(obj[nb]%s)) error stop "ALLOCATED after a remote allocation"
  sync all
  if (.not. allocated(obj%s)) error stop "scalar component not allocated by the assignment"
  if (obj%s /= 10 * prev) error stop "value of a remotely allocated scalar"
  if (.not. allocated(obj%v)) error stop "array component not allocated by the assignment"
  if (size(obj%v) /= prev + 2 .or. lbound(obj%v, 1) /= 1) error stop "shape of a remotely allocated array"
  if (any(obj%v /= [(i * prev, i=1, prev + 2)])) error stop "values of a remotely allocated array"
  if (any(shape(obj%m) /= [3, 2])) error stop "shape of a remotely allocated 2-d array"
  if (any(obj%m /= reshape([(real(i, 8), i=1, 6)], [3, 2]) * prev)) error stop "values of a 2-d array"
  if (allocated(obj%arr(1)%r) .or. allocated(obj%arr(3)%r)) error stop "neighbouring elements allocated"
  if (.not. allocated(obj%arr(2)%r)) error stop "component of an array element not allocated"
  if (obj%arr(2)%r /= 1.5 * prev) error stop "value of a component of an array element"
  ! The owner's own use of what another image allocated.
  obj%v(1) = -1
  obj%s = obj%s + 1
  sync all

  ! Allocated there with another shape: reallocated; with the same shape:
  ! written in place.
  obj[nb]%v = [7, 8]
  obj[nb]%s = 3
  sync all
  if (size(obj%v) /= 2) error stop "reallocation to another shape"
  if (any(obj%v /= [7, 8])) error stop "values after a reallocation"
  if (obj%s /= 3) error stop "assignment to an allocated scalar"
  sync all

  ! The owner deallocates what another image allocated.
  deallocate(obj%s, obj%v, obj%m, obj%arr(2)%r)
  sync all
  if (allocated(obj[nb]%s) .or. allocated(obj[nb]%v)) error stop "ALLOCATED after the owner's deallocate"
  sync all
  if (me == 1) print *, "Test passed."
end program
