//! One multi-process job of a test, and how it must end: a program on N
//! locales under `pgasrun` with arguments, environment and a time limit
//! ([`Job`]); [`Job::passes`] asserts it exited cleanly and printed its ok
//! lines, [`Job::fails_naming`] that it failed (without hanging) with an
//! error naming what it must.

use crate::{example, launch, Run};
use std::path::PathBuf;
use std::time::Duration;

/// A job: program, locales, arguments, environment, time limit (120 s
/// unless set), and whether it runs one at a time in this test process
/// ([`crate::cbuild::one_job`]).
#[derive(Clone, Debug)]
pub struct Job {
    n: usize,
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    timeout: Duration,
    serial: bool,
}

impl Job {
    /// `program` on `n` locales.
    pub fn new(program: PathBuf, n: usize) -> Job {
        Job {
            n,
            program,
            args: Vec::new(),
            env: Vec::new(),
            timeout: Duration::from_secs(120),
            serial: false,
        }
    }

    /// The workspace example `name` on `n` locales.
    pub fn example(name: &str, n: usize) -> Job {
        Job::new(example(name), n)
    }

    /// Adds arguments.
    pub fn args<S: AsRef<str>>(mut self, args: &[S]) -> Job {
        self.args
            .extend(args.iter().map(|a| a.as_ref().to_string()));
        self
    }

    /// Adds environment (after what is there: a later value wins).
    pub fn env(mut self, env: &[(&str, &str)]) -> Job {
        self.env
            .extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        self
    }

    /// Sets `PGAS_PROVIDER`.
    pub fn provider(self, provider: &str) -> Job {
        self.env(&[("PGAS_PROVIDER", provider)])
    }

    /// Sets the time limit, in seconds.
    pub fn secs(mut self, secs: u64) -> Job {
        self.timeout = Duration::from_secs(secs);
        self
    }

    /// Runs it one job at a time in this test process.
    pub fn serial(mut self) -> Job {
        self.serial = true;
        self
    }

    /// `program [args] -n N [env]`, for failure messages.
    pub fn what(&self) -> String {
        let name = self.program.file_name().unwrap_or_default();
        format!(
            "{} {:?} -n {} {:?}",
            name.to_string_lossy(),
            self.args,
            self.n,
            self.env
        )
    }

    /// Runs it and hands back how it ended.
    pub fn run(&self) -> Run {
        let _one = self.serial.then(crate::cbuild::one_job);
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        launch(self.n, &self.program, &args, &env, self.timeout)
    }

    /// Runs it; asserts that it exited 0 and that its standard output
    /// holds every one of `oks`. Returns the run.
    pub fn passes<S: AsRef<str>>(&self, oks: &[S]) -> Run {
        let run = self.run();
        let what = self.what();
        run.assert_ok(&what);
        for ok in oks {
            let ok = ok.as_ref();
            assert!(run.stdout.contains(ok), "{what}: no {ok:?}: {}", run.stdout);
        }
        run
    }

    /// Runs it; asserts that it exited 0. Returns the run.
    pub fn succeeds(&self) -> Run {
        self.passes::<&str>(&[])
    }

    /// Runs it; asserts that it failed, not by the launcher's time limit
    /// (a hang), and that its standard error names every one of `needles`.
    /// Returns the run.
    pub fn fails_naming<S: AsRef<str>>(&self, needles: &[S]) -> Run {
        let run = self.run();
        let what = self.what();
        assert!(!run.ok(), "{what} was accepted:\n{}", run.stdout);
        assert_ne!(run.code, Some(124), "{what} hung instead of failing");
        for n in needles {
            let n = n.as_ref();
            assert!(
                run.stderr.contains(n),
                "{what}: stderr does not name {n:?}:\n{}",
                run.stderr
            );
        }
        run
    }
}

/// Runs `am_probe ARGS` on 3 locales with `PGAS_PROVIDER=provider` and
/// `extra`, one such job at a time in this test binary (the machine has 2
/// cores), within `timeout`; asserts that it exited cleanly and that locale
/// 0 printed `am_probe <ARGS[0]> ok on <provider>`. Returns the run.
pub fn am_probe(provider: &str, args: &[&str], extra: &[(&str, &str)], timeout: Duration) -> Run {
    Job::example("am_probe", 3)
        .args(args)
        .provider(provider)
        .env(extra)
        .secs(timeout.as_secs())
        .serial()
        .passes(&[format!("am_probe {} ok on {provider}", args[0])])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_names_program_arguments_locales_and_environment() {
        let j = Job::new(PathBuf::from("/x/probe"), 3)
            .args(&["a", "b"])
            .provider("shm")
            .env(&[("K", "v")])
            .secs(7);
        assert_eq!(
            j.what(),
            r#"probe ["a", "b"] -n 3 [("PGAS_PROVIDER", "shm"), ("K", "v")]"#
        );
        assert_eq!(j.timeout, Duration::from_secs(7));
        assert!(!j.serial && j.serial().serial);
    }
}
