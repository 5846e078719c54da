! Teams beyond what the suite checks: images keep their relative order in
! a team formed without NEW_INDEX; this_image / num_images / team_number
! answer for the current team; a coarray allocated inside CHANGE TEAM is
! addressed by team image indices and deallocated by END TEAM (ALLOCATED()
! is false after it); collectives run over the team only; SYNC TEAM of an
! ancestor from a nested team; entering the same team twice.
program teams_alloc
  use checks, only : fail, report_passed
  use iso_fortran_env, only : team_type
  implicit none
  type(team_type) :: parity, half
  integer, allocatable :: x(:)[:]
  integer :: me, np, mine, n_mine, idx, s, round, k
  me = this_image()
  np = num_images()
  if (team_number() /= -1) call fail('initial team number is not -1')

  mine = 100 + mod(me, 2)
  n_mine = (np + mod(me, 2)) / 2  ! images with my parity
  idx = (me + 1) / 2              ! my index among them
  form team (mine, parity)
  if (team_number(parity) /= mine) call fail('team_number(team) after FORM TEAM')
  do round = 1, 2
    change team (parity)
      if (team_number() /= mine) call fail('team_number() in the team')
      if (num_images() /= n_mine) call fail('num_images() in the team')
      if (this_image() /= idx) call fail('this_image() in the team: order not kept')
      allocate(x(2)[*])
      x(1) = this_image() * 10 + round
      x(2) = me
      sync all
      k = mod(this_image(), num_images()) + 1
      if (x(1)[k] /= k * 10 + round) call fail('coindexed get by team image index')
      if (x(2)[k] /= 2 * k - mod(me, 2)) call fail('team image k is not initial image 2k-1 / 2k')
      s = me
      call co_sum(s)
      if (s /= sum([(2 * k - mod(me, 2), k = 1, n_mine)])) call fail('co_sum over the team')
      s = merge(me, -1, this_image() == 1)
      call co_broadcast(s, 1)
      if (s /= 2 - mod(me, 2)) call fail('co_broadcast from team image 1')
      form team (1 + mod(this_image(), 2), half)
      change team (half)
        if (team_number() /= 1 + mod(idx, 2)) call fail('nested team_number()')
        if (num_images() /= (n_mine + mod(idx, 2)) / 2) call fail('nested num_images()')
        sync team (parity)
        sync team (half)
      end team
      if (num_images() /= n_mine) call fail('num_images() after the nested END TEAM')
    end team
    if (allocated(x)) call fail('END TEAM left a coarray allocated in the team allocated')
    if (num_images() /= np .or. this_image() /= me) call fail('back in the initial team')
    if (team_number() /= -1) call fail('team number after END TEAM')
  end do
  call report_passed()
end program
