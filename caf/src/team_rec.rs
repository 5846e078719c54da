//! A team as the library keeps it: below the state and the tokens, so that
//! both can name it (a token remembers the team that allocated it).

use parking_lot::Mutex;
use runtime_shim::Team;
use std::sync::Arc;

/// A team as gfortran's `team_type` holds it (a pointer to this, leaked by
/// `form_team` and valid for the job): the runtime team, the number FORM
/// TEAM gave it, its parent, and the coarrays allocated while it was the
/// current team (freed at END TEAM).
pub struct TeamRec {
    /// The runtime team (ranks = image index - 1).
    pub team: Team,
    /// TEAM_NUMBER: -1 for the initial team.
    pub number: i64,
    /// The team it was formed from (None: the initial team).
    pub parent: Option<Arc<TeamRec>>,
    /// Tokens (as `usize` pointers) of coarrays allocated in this team and
    /// not yet deallocated: END TEAM deallocates them.
    pub allocated: Mutex<Vec<usize>>,
}

impl TeamRec {
    /// The world locale of image `image` (1-based) of this team.
    pub fn locale_of(&self, image: i64) -> Option<usize> {
        if image < 1 {
            return None;
        }
        self.team.locales().get(image as usize - 1).copied()
    }

    /// This image's index in the team (1-based).
    pub fn this_image(&self) -> i64 {
        self.team.rank() as i64 + 1
    }

    /// Number of images in the team.
    pub fn num_images(&self) -> i64 {
        self.team.size() as i64
    }
}
