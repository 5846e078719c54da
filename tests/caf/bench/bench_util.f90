! Shared by the programs of tests/caf/bench (scripts/caf-peer compiles it
! first): the k-th command argument as an integer with a default, and the
! microseconds per operation between two system_clock counts.
module bench_util
  use iso_fortran_env, only : int64, real64
  implicit none
  private
  public :: int_arg, us_per
contains
  integer function int_arg(k, default)
    integer, intent(in) :: k, default
    character(len=16) :: arg
    int_arg = default
    if (command_argument_count() >= k) then
      call get_command_argument(k, arg)
      read (arg, *) int_arg
    end if
  end function

  real(real64) function us_per(t0, t1, ops)
    integer(int64), intent(in) :: t0, t1
    integer, intent(in) :: ops
    integer(int64) :: rate
    call system_clock(count_rate=rate)
    us_per = real(t1 - t0, real64) / rate * 1d6 / ops
  end function
end module
