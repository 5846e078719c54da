//! The provider x mode matrix the litmus suites run their jobs in
//! (`tests/tests/litmus_gen.rs`, `tests/tests/litmus_c.rs`): a job's
//! setting, and the cells both start from.

/// One job's setting: a provider, an MCM mode, extra environment and a
/// label naming what that environment changes.
#[derive(Clone, Debug)]
pub struct Cell {
    pub provider: &'static str,
    pub mode: &'static str,
    pub env: Vec<(&'static str, &'static str)>,
    pub label: &'static str,
}

/// The cell of `provider` in `mode`, no extra environment, no label.
pub fn cell(provider: &'static str, mode: &'static str) -> Cell {
    Cell {
        provider,
        mode,
        env: Vec::new(),
        label: "",
    }
}

impl Cell {
    /// "provider mode label": what the suites' cell filters match.
    pub fn text(&self) -> String {
        format!("{} {} {}", self.provider, self.mode, self.label)
    }

    /// The job's environment: the provider, the mode,
    /// `PGAS_NUM_WORKERS=workers` unless the cell sets it, the cell's
    /// environment, then `extra`.
    pub fn job_env<'a>(
        &self,
        workers: &'a str,
        extra: &[(&'a str, &'a str)],
    ) -> Vec<(&'a str, &'a str)> {
        let mut env = vec![
            ("PGAS_PROVIDER", self.provider),
            ("PGAS_MCM_MODE", self.mode),
        ];
        if !self.env.iter().any(|(k, _)| *k == "PGAS_NUM_WORKERS") {
            env.push(("PGAS_NUM_WORKERS", workers));
        }
        env.extend(self.env.iter().copied());
        env.extend(extra.iter().copied());
        env
    }
}

/// Every provider in every MCM mode it honours on its own path.
pub fn every_mode() -> Vec<Cell> {
    vec![
        cell("shm", "message-order"),
        cell("shm", "delivery-complete"),
        cell("tcp;ofi_rxm", "message-order"),
        cell("tcp;ofi_rxm", "delivery-complete"),
        cell("udp;ofi_rxd", "message-order"),
        cell("udp;ofi_rxd", "delivery-complete"),
        cell("sockets", "message-order-fence"),
        cell("sockets", "message-order"),
        cell("sockets", "delivery-complete"),
    ]
}

/// The cell of `provider` in `mode` with `env`, labelled `label`.
pub fn with(
    label: &'static str,
    env: &[(&'static str, &'static str)],
    provider: &'static str,
    mode: &'static str,
) -> Cell {
    Cell {
        env: env.to_vec(),
        label,
        ..cell(provider, mode)
    }
}

/// A row of a cell table: each (provider, mode) of `cells` with `env`,
/// labelled `label`.
pub fn labelled(
    label: &'static str,
    env: &[(&'static str, &'static str)],
    cells: &[(&'static str, &'static str)],
) -> Vec<Cell> {
    cells
        .iter()
        .map(|&(provider, mode)| with(label, env, provider, mode))
        .collect()
}

/// The intra-node mapped path (`PGAS_LOCAL_PATH=mapped`), every mode once.
pub fn mapped_path() -> Vec<Cell> {
    labelled(
        "mapped path",
        &[("PGAS_LOCAL_PATH", "mapped")],
        &[
            ("shm", "message-order"),
            ("shm", "delivery-complete"),
            ("sockets", "message-order-fence"),
        ],
    )
}

/// Two simulated hosts, a,b,a,b, on the mapped path: L0 and L2 map each
/// other, as do L1 and L3; every other pair takes the provider.
pub fn mixed_hosts(provider: &'static str, mode: &'static str) -> Cell {
    let env = [
        ("PGAS_TEST_HOSTNAMES", "a,b,a,b"),
        ("PGAS_LOCAL_PATH", "mapped"),
    ];
    with("mixed hosts", &env, provider, mode)
}

/// What a negative control's jobs found: how many jobs ran, their
/// iterations and forbidden outcomes in all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ControlTally {
    pub jobs: usize,
    pub iterations: u64,
    pub forbidden: u64,
}

/// Runs a negative control's jobs: `job(k)` (k from 1) runs one and returns
/// its (iterations, forbidden outcomes), or `None` if the job failed (which
/// ends the control). Stops at the first job that shows a forbidden outcome
/// or after `max_jobs`: a control's rate varies from job to job far more
/// than within one (a job over tcp;ofi_rxm may show a weakening in most of
/// its iterations or in none), so one quiet job proves little.
pub fn control_jobs(
    max_jobs: usize,
    mut job: impl FnMut(usize) -> Option<(u64, u64)>,
) -> ControlTally {
    let mut t = ControlTally::default();
    while t.jobs < max_jobs && t.forbidden == 0 {
        t.jobs += 1;
        let Some((iterations, forbidden)) = job(t.jobs) else {
            break;
        };
        t.iterations += iterations;
        t.forbidden += forbidden;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_setting_the_workers_keeps_its_own() {
        let one = Cell {
            env: vec![("PGAS_NUM_WORKERS", "1")],
            ..cell("shm", "message-order")
        };
        let env = one.job_env("3", &[("X", "y")]);
        let workers: Vec<_> = env
            .iter()
            .filter(|(k, _)| *k == "PGAS_NUM_WORKERS")
            .collect();
        assert_eq!(workers, [&("PGAS_NUM_WORKERS", "1")]);
        assert_eq!(env.last(), Some(&("X", "y")));
        let plain = cell("shm", "message-order").job_env("3", &[]);
        assert!(plain.contains(&("PGAS_NUM_WORKERS", "3")));
        assert_eq!(plain[0], ("PGAS_PROVIDER", "shm"));
    }

    #[test]
    fn a_labelled_row_gives_each_cell_the_env_and_label() {
        let row = labelled("x", &[("K", "v")], &[("shm", "a"), ("sockets", "b")]);
        let texts: Vec<String> = row.iter().map(Cell::text).collect();
        assert_eq!(texts, ["shm a x", "sockets b x"]);
        assert!(row.iter().all(|c| c.env == [("K", "v")]));
    }

    #[test]
    fn control_jobs_stop_at_the_first_that_shows_the_hole() {
        let seen = [0, 0, 7, 9];
        let t = control_jobs(5, |k| Some((100, seen[k - 1])));
        assert_eq!(
            t,
            ControlTally {
                jobs: 3,
                iterations: 300,
                forbidden: 7
            }
        );
        let t = control_jobs(2, |_| Some((100, 0)));
        assert_eq!((t.jobs, t.forbidden), (2, 0));
        let t = control_jobs(5, |k| (k < 2).then_some((100, 0)));
        assert_eq!((t.jobs, t.iterations), (2, 100));
    }
}
