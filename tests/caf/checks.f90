! Checking and reporting shared by our own test programs (tests/caf/manifest.txt
! lists it first in each program's sources): a failed check stops the job at
! once, naming the check and the image; a test that got to its end prints
! "Test passed." on image 1 once every image got there.
module checks
  implicit none
  private
  public :: fail, check, report_passed
contains
  subroutine fail(what)
    character(*), intent(in) :: what
    print '(a,i0,2a)', 'Test failed on image ', this_image(), ': ', what
    error stop 1
  end subroutine

  subroutine check(what, ok)
    character(*), intent(in) :: what
    logical, intent(in) :: ok
    if (.not. ok) call fail(what)
  end subroutine

  ! Every image waits for every other (SYNC ALL), then image 1 reports.
  subroutine report_passed()
    sync all
    if (this_image() == 1) print '(a)', 'Test passed.'
  end subroutine
end module
