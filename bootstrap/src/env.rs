//! The environment contract between `pgasrun` and a locale, and the choice of
//! OOB backend from it. Kept apart from the backends so the parsing is a pure
//! function that unit tests can feed any environment; and below them: the
//! backends (`client`, `pmix`) take their parsed environment from here, and
//! [`Backend::connect`] (which needs them) lives at the crate root, so no
//! module here imports one that imports it back.

use std::ffi::OsString;
use std::net::SocketAddr;

use crate::error::OobError;

/// `127.0.0.1:PORT` where the launcher serves the OOB.
pub const OOB_ADDR: &str = "PGAS_OOB_ADDR";
/// This locale's rank, `0..PGAS_SIZE`.
pub const RANK: &str = "PGAS_RANK";
/// Number of locales in the job.
pub const SIZE: &str = "PGAS_SIZE";
/// Random 64-bit job token (16 hex digits) the locale presents when it
/// connects, so a stray process cannot join the wrong job.
pub const JOB_ID: &str = "PGAS_JOB_ID";
/// Every variable the launcher sets.
pub const LAUNCHER_VARS: [&str; 4] = [OOB_ADDR, RANK, SIZE, JOB_ID];
/// Set by a PMIx launcher (OpenMPI's mpirun, `srun --mpi=pmix`, prterun)
/// for each process: its rank in the job.
pub const PMIX_RANK: &str = "PMIX_RANK";
/// Set by a PMIx launcher for each process: the job's PMIx namespace.
pub const PMIX_NAMESPACE: &str = "PMIX_NAMESPACE";
/// Set by PMI-1/PMI-2 launchers (MPICH's hydra, `srun --mpi=pmi2`), which
/// are not supported.
pub const PMI_RANK: &str = "PMI_RANK";

/// What a PMIx launcher told this process (as far as the environment says;
/// `PMIx_Init` has the last word).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PmixEnv {
    /// `PMIX_NAMESPACE`, if set.
    pub namespace: Option<String>,
    /// `PMIX_RANK`, if set.
    pub rank: Option<u32>,
}

/// What `pgasrun` told this locale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LauncherEnv {
    /// Launcher address.
    pub addr: SocketAddr,
    /// Our rank.
    pub rank: usize,
    /// Job size.
    pub size: usize,
    /// Job token.
    pub job_id: u64,
}

/// How this process was started, hence which OOB implementation it gets.
///
/// To add a bootstrap: give it a variant here, detect it in
/// [`Backend::detect_from`] and construct it in [`Backend::connect`]; callers
/// only see `Box<dyn Oob>`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// Started by `pgasrun`: connect to it.
    Launcher(LauncherEnv),
    /// Run by hand: locale 0 of 1.
    Single,
    /// Started by a PMIx launcher (mpirun, `srun --mpi=pmix`): use its PMIx
    /// server through the installed libpmix (loaded at run time).
    Pmix(PmixEnv),
    /// Started by a PMI-1/PMI-2 launcher: not supported,
    /// [`Backend::connect`] returns [`OobError::PmiUnsupported`].
    Pmi {
        /// The variable that gave it away.
        var: &'static str,
        /// Its value.
        value: String,
    },
}

impl Backend {
    /// Detects the backend from the process environment.
    pub fn detect() -> Result<Backend, OobError> {
        Backend::detect_from(|k| std::env::var_os(k))
    }

    /// Detects the backend from `get` (an environment lookup).
    ///
    /// Our variables win over PMIx ones (pgasrun run inside an allocation);
    /// `PMIX_RANK` or `PMIX_NAMESPACE` means PMIx; `PMI_RANK` alone means a
    /// PMI-1/PMI-2 launcher.
    /// If only some of ours are set, that is an error naming the missing one
    /// rather than a silent single-locale run.
    pub fn detect_from(get: impl Fn(&str) -> Option<OsString>) -> Result<Backend, OobError> {
        let ours: Vec<(&'static str, OsString)> = LAUNCHER_VARS
            .iter()
            .filter_map(|&k| get(k).map(|v| (k, v)))
            .collect();
        if ours.is_empty() {
            let text = |var: &str| get(var).map(|v| v.to_string_lossy().into_owned());
            let (namespace, rank_s) = (text(PMIX_NAMESPACE), text(PMIX_RANK));
            if namespace.is_some() || rank_s.is_some() {
                let rank = match rank_s {
                    None => None,
                    Some(r) => Some(r.trim().parse::<u32>().map_err(|e| OobError::BadEnv {
                        var: PMIX_RANK,
                        value: r.clone(),
                        reason: format!("expected an integer ({e})"),
                    })?),
                };
                return Ok(Backend::Pmix(PmixEnv { namespace, rank }));
            }
            if let Some(value) = text(PMI_RANK) {
                return Ok(Backend::Pmi {
                    var: PMI_RANK,
                    value,
                });
            }
            return Ok(Backend::Single);
        }
        let present = ours[0].0;
        let value = |var: &'static str| -> Result<String, OobError> {
            let v = get(var).ok_or(OobError::MissingEnv { var, present })?;
            v.into_string().map_err(|v| OobError::BadEnv {
                var,
                value: v.to_string_lossy().into_owned(),
                reason: "not valid UTF-8".into(),
            })
        };
        let bad = |var: &'static str, value: &str, reason: String| OobError::BadEnv {
            var,
            value: value.to_owned(),
            reason,
        };

        let addr_s = value(OOB_ADDR)?;
        let addr: SocketAddr = addr_s
            .trim()
            .parse()
            .map_err(|e| bad(OOB_ADDR, &addr_s, format!("expected IP:PORT ({e})")))?;
        let size_s = value(SIZE)?;
        let size: usize = size_s
            .trim()
            .parse()
            .ok()
            .filter(|&n| n >= 1 && n <= u32::MAX as usize)
            .ok_or_else(|| bad(SIZE, &size_s, "expected a positive integer".into()))?;
        let rank_s = value(RANK)?;
        let rank: usize = rank_s
            .trim()
            .parse()
            .map_err(|e| bad(RANK, &rank_s, format!("expected an integer ({e})")))?;
        if rank >= size {
            return Err(bad(
                RANK,
                &rank_s,
                format!("must be less than {SIZE}={size}"),
            ));
        }
        let job_s = value(JOB_ID)?;
        let job_id = u64::from_str_radix(job_s.trim(), 16)
            .map_err(|e| bad(JOB_ID, &job_s, format!("expected 16 hex digits ({e})")))?;
        Ok(Backend::Launcher(LauncherEnv {
            addr,
            rank,
            size,
            job_id,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn detect(vars: &[(&str, &str)]) -> Result<Backend, OobError> {
        let m: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        Backend::detect_from(|k| m.get(k).cloned())
    }

    const GOOD: [(&str, &str); 4] = [
        (OOB_ADDR, "127.0.0.1:4567"),
        (RANK, "2"),
        (SIZE, "4"),
        (JOB_ID, "00000000deadbeef"),
    ];

    fn with(over: (&'static str, &'static str)) -> Vec<(&'static str, &'static str)> {
        GOOD.iter()
            .map(|&(k, v)| if k == over.0 { over } else { (k, v) })
            .collect()
    }

    #[test]
    fn no_vars_is_single_locale() {
        assert_eq!(detect(&[]).unwrap(), Backend::Single);
        let oob = detect(&[]).unwrap().connect().unwrap();
        assert_eq!((oob.rank(), oob.size()), (0, 1));
    }

    #[test]
    fn full_launcher_env_parses() {
        assert_eq!(
            detect(&GOOD).unwrap(),
            Backend::Launcher(LauncherEnv {
                addr: "127.0.0.1:4567".parse().unwrap(),
                rank: 2,
                size: 4,
                job_id: 0xdead_beef,
            })
        );
    }

    #[test]
    fn pmix_without_ours_is_detected() {
        assert_eq!(
            detect(&[(PMIX_RANK, "3"), (PMIX_NAMESPACE, "1221984257")]).unwrap(),
            Backend::Pmix(PmixEnv {
                namespace: Some("1221984257".into()),
                rank: Some(3)
            })
        );
        // Either one is enough (PMIx_Init has the last word).
        assert_eq!(
            detect(&[(PMIX_NAMESPACE, "slurm.pmix.42.0")]).unwrap(),
            Backend::Pmix(PmixEnv {
                namespace: Some("slurm.pmix.42.0".into()),
                rank: None
            })
        );
        // PMIx wins over PMI-1 variables some launchers set as well.
        assert!(matches!(
            detect(&[(PMIX_RANK, "0"), (PMI_RANK, "0")]).unwrap(),
            Backend::Pmix(_)
        ));
        let e = detect(&[(PMIX_RANK, "x")]).unwrap_err();
        assert!(matches!(e, OobError::BadEnv { var: PMIX_RANK, .. }), "{e}");
        // Ours win when both are present (pgasrun inside an allocation).
        let mut v = GOOD.to_vec();
        v.push((PMIX_RANK, "0"));
        v.push((PMIX_NAMESPACE, "n"));
        assert!(matches!(detect(&v).unwrap(), Backend::Launcher(_)));
    }

    #[test]
    fn pmi1_is_detected_and_refused_with_a_way_out() {
        let b = detect(&[(PMI_RANK, "3")]).unwrap();
        assert_eq!(
            b,
            Backend::Pmi {
                var: PMI_RANK,
                value: "3".into()
            }
        );
        let msg = b.connect().err().unwrap().to_string();
        assert!(
            msg.contains("PMI_RANK=3")
                && msg.contains("srun --mpi=pmix")
                && msg.contains("pgasrun"),
            "{msg}"
        );
    }

    #[test]
    fn bad_values_name_variable_and_value() {
        for (var, val) in [
            (RANK, "two"),
            (RANK, "4"),
            (RANK, "-1"),
            (SIZE, "0"),
            (SIZE, "x"),
            (OOB_ADDR, "localhost"),
            (JOB_ID, "zz"),
        ] {
            let e = detect(&with((var, val))).unwrap_err();
            let msg = e.to_string();
            assert!(
                matches!(e, OobError::BadEnv { .. }) && msg.contains(var) && msg.contains(val),
                "{var}={val}: {msg}"
            );
        }
    }

    #[test]
    fn partial_launcher_env_names_the_missing_variable() {
        let e = detect(&[(RANK, "0"), (SIZE, "2")]).unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e, OobError::MissingEnv { var: OOB_ADDR, .. }),
            "{msg}"
        );
        assert!(msg.contains("PGAS_OOB_ADDR is not set"), "{msg}");
    }
}
