! sync images(*): image 1 synchronises with every other image at once, each
! of which synchronises with image 1 only; what each wrote to image 1 before
! its sync images is visible on image 1 after sync images(*), and the reply
! written by image 1 is visible on each after the next pair. Then every
! image runs sync images(*) with every other (an all-to-all round).
program sync_images_star
  use checks, only : fail, report_passed
  implicit none
  integer :: slot(64)[*], reply[*], round, me, np, i
  me = this_image()
  np = num_images()
  if (np > 64) error stop 'sync_images_star: at most 64 images'
  slot = 0
  reply = 0
  sync all   ! nobody puts into image 1's slots before it has cleared them
  do round = 1, 50
    if (me /= 1) then
      slot(me)[1] = round * 100 + me
      sync images(1)
      sync images(1)
      if (reply /= round) call fail('reply of image 1 not visible after sync images(1)')
    else
      sync images(*)
      do i = 2, np
        if (slot(i) /= round * 100 + i) call fail('slot not visible after sync images(*)')
      end do
      do i = 2, np
        reply[i] = round
      end do
      sync images(*)
    end if
  end do
  ! All to all: each image writes its number into every other, then sync images(*).
  slot(me)[merge(1, me + 1, me == np)] = -me
  sync images(*)
  if (slot(merge(np, me - 1, me == 1)) /= -merge(np, me - 1, me == 1)) call fail('all-to-all sync images(*)')
  call report_passed()
end program
