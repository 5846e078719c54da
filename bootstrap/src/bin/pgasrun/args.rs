//! Command-line parsing for pgasrun, hand-written: a few options, no
//! dependency, and error messages that name the offending value.

use std::ffi::{OsStr, OsString};
use std::time::Duration;

use bootstrap::env as oob_env;

/// Most locales one pgasrun starts (all on this machine).
pub const MAX_LOCALES: usize = 1024;

pub const USAGE: &str = "\
Usage: pgasrun -n N [OPTIONS] [--] PROGRAM [ARGS...]

Starts N locales (processes) of PROGRAM on this machine and serves their
out-of-band start-up exchange. Exits 0 if every locale exits 0; if one fails,
the others are stopped and pgasrun reports which one and how.

Options:
  -n, -np, --locales N  number of locales, 1..=1024 (required)
  -p, --prefix          prefix each output line with the locale id: \"[2] \"
  -e, --env VAR=VALUE   set VAR in every locale's environment (repeatable)
      --timeout SECS    stop the job after SECS seconds (exit status 124);
                        default: PGAS_JOB_TIMEOUT=SECS if set, else none
  -v, --verbose         launcher diagnostics on stderr (-vv for more);
                        RUST_LOG overrides
  -h, --help            print this help
  -V, --version         print the version

Every locale inherits pgasrun's environment plus PGAS_OOB_ADDR, PGAS_RANK,
PGAS_SIZE and PGAS_JOB_ID. Locale 0 gets pgasrun's standard input.

Exit status: 0 all locales succeeded; the failing locale's status (128+N if
killed by signal N); 1 a locale aborted or left a collective unfinished;
124 timeout (--timeout, PGAS_JOB_TIMEOUT) exceeded; 128+N pgasrun got signal N; 2 bad usage or PROGRAM
cannot be started.
See docs/launcher.md.
";

/// The environment variable giving the job timeout when `--timeout` is not
/// given (a site or CI default: no job hangs forever).
pub const JOB_TIMEOUT_VAR: &str = "PGAS_JOB_TIMEOUT";

/// How long the job may run, and who said so (named in the expiry message).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timeout {
    pub limit: Duration,
    /// `--timeout` or `PGAS_JOB_TIMEOUT`.
    pub source: &'static str,
}

/// The job's timeout: `--timeout` if given (`flag`), else `PGAS_JOB_TIMEOUT`
/// (`env`, its value if set; empty counts as unset), else none. A bad
/// `PGAS_JOB_TIMEOUT` is an error naming it and its value (even with the
/// flag given, so a typo in a site default does not go unnoticed).
pub fn job_timeout(
    flag: Option<Duration>,
    env: Option<OsString>,
) -> Result<Option<Timeout>, String> {
    let from_env = match env {
        Some(v) if !v.is_empty() => Some(parse_timeout(JOB_TIMEOUT_VAR, &v)?),
        _ => None,
    };
    Ok(match (flag, from_env) {
        (Some(limit), _) => Some(Timeout {
            limit,
            source: "--timeout",
        }),
        (None, Some(limit)) => Some(Timeout {
            limit,
            source: JOB_TIMEOUT_VAR,
        }),
        (None, None) => None,
    })
}

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub locales: usize,
    pub prefix: bool,
    pub env: Vec<(OsString, OsString)>,
    pub timeout: Option<Duration>,
    pub verbose: u8,
    pub program: OsString,
    pub args: Vec<OsString>,
}

/// Result of parsing.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    Run(Options),
    Help,
    Version,
}

/// Parses the arguments after `argv[0]`. `Err` is a one-line message for the
/// user (exit status 2).
pub fn parse(argv: impl IntoIterator<Item = OsString>) -> Result<Parsed, String> {
    let mut it = argv.into_iter();
    let mut locales = None;
    let mut prefix = false;
    let mut env = Vec::new();
    let mut timeout = None;
    let mut verbose = 0u8;
    let mut program = None;

    while let Some(arg) = it.next() {
        let Some(s) = arg.to_str() else {
            // A non-UTF-8 word can only be the program.
            program = Some(arg);
            break;
        };
        if s == "--" {
            program = it.next();
            if program.is_none() {
                return Err("missing PROGRAM after '--'".into());
            }
            break;
        }
        if !s.starts_with('-') || s == "-" {
            program = Some(arg);
            break;
        }
        // Split "--opt=value" / "-nVALUE".
        let (name, inline): (&str, Option<&str>) = if let Some(rest) = s.strip_prefix("--") {
            match rest.split_once('=') {
                Some((n, v)) => (&s[..n.len() + 2], Some(v)),
                None => (s, None),
            }
        } else if let Some(v) = s.strip_prefix("-np").filter(|v| !v.is_empty()) {
            // MPI's spelling, value attached: "-np4".
            ("-np", Some(v))
        } else if s.len() > 2 && s != "-np" && matches!(&s[..2], "-n" | "-e") {
            (&s[..2], Some(&s[2..]))
        } else {
            (s, None)
        };
        let mut value = |what: &str| -> Result<OsString, String> {
            match inline {
                Some(v) => Ok(v.into()),
                None => it
                    .next()
                    .ok_or_else(|| format!("option '{name}' needs a value ({what})")),
            }
        };
        match name {
            // "-np": what every MPI and OpenSHMEM user types.
            "-n" | "-np" | "--locales" => {
                let v = value("number of locales")?;
                let n = parse_locales(name, &v)?;
                if let Some(first) = locales {
                    return Err(format!(
                        "option '{name}' given twice ({first}, then {n}); give the number of \
                         locales once"
                    ));
                }
                locales = Some(n);
            }
            "--timeout" if timeout.is_some() => {
                return Err("option '--timeout' given twice; give it once".into());
            }
            "-e" | "--env" => {
                let v = value("VAR=VALUE")?;
                env.push(parse_env(name, &v)?);
            }
            "--timeout" => {
                let v = value("seconds")?;
                timeout = Some(parse_timeout("--timeout", &v)?);
            }
            "-p" | "--prefix" | "-v" | "--verbose" | "-vv" | "-h" | "--help" | "-V"
            | "--version"
                if inline.is_some() =>
            {
                return Err(format!("option '{name}' takes no value"));
            }
            "-p" | "--prefix" => prefix = true,
            "-v" | "--verbose" => verbose = verbose.saturating_add(1),
            "-vv" => verbose = verbose.saturating_add(2),
            "-h" | "--help" => return Ok(Parsed::Help),
            "-V" | "--version" => return Ok(Parsed::Version),
            _ => return Err(format!("unknown option '{s}'")),
        }
    }

    let locales = locales.ok_or("missing -n N (the number of locales)")?;
    let program = program.ok_or("missing PROGRAM to run")?;
    Ok(Parsed::Run(Options {
        locales,
        prefix,
        env,
        timeout,
        verbose,
        program,
        args: it.collect(),
    }))
}

fn parse_locales(opt: &str, v: &OsStr) -> Result<usize, String> {
    let s = v.to_string_lossy();
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_LOCALES).contains(&n) => Ok(n),
        Ok(n) => Err(format!(
            "{opt} {n}: the number of locales must be from 1 to {MAX_LOCALES}"
        )),
        Err(_) => Err(format!(
            "{opt}: invalid number of locales '{s}' (expected an integer from 1 to {MAX_LOCALES})"
        )),
    }
}

fn parse_env(opt: &str, v: &OsStr) -> Result<(OsString, OsString), String> {
    let shown = v.to_string_lossy();
    let bytes = v.as_encoded_bytes();
    let Some(eq) = bytes.iter().position(|&b| b == b'=') else {
        return Err(format!("{opt} '{shown}': expected VAR=VALUE"));
    };
    if eq == 0 {
        return Err(format!("{opt} '{shown}': empty variable name"));
    }
    let name = String::from_utf8_lossy(&bytes[..eq]).into_owned();
    if oob_env::LAUNCHER_VARS.contains(&name.as_str()) {
        return Err(format!(
            "{opt} '{shown}': {name} is set by pgasrun for each locale"
        ));
    }
    // Splitting at an ASCII '=' keeps both halves valid OsStr encodings.
    let (k, val) = (&bytes[..eq], &bytes[eq + 1..]);
    Ok((os_from_bytes(k), os_from_bytes(val)))
}

fn os_from_bytes(b: &[u8]) -> OsString {
    use std::os::unix::ffi::OsStrExt;
    OsStr::from_bytes(b).to_owned()
}

/// A number of seconds > 0 (fractions allowed); `what` (the option or
/// variable) and the value are named when it is not.
fn parse_timeout(what: &str, v: &OsStr) -> Result<Duration, String> {
    let s = v.to_string_lossy();
    match s.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && t > 0.0 && t < 1e9 => Ok(Duration::from_secs_f64(t)),
        _ => Err(format!(
            "{what}: invalid value '{s}' (expected a number of seconds > 0)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Parsed, String> {
        parse(args.iter().map(OsString::from))
    }

    fn run(args: &[&str]) -> Options {
        match p(args) {
            Ok(Parsed::Run(o)) => o,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn typical_command_lines() {
        let o = run(&["-n", "4", "-p", "--timeout", "2.5", "prog", "-n", "x"]);
        assert_eq!(o.locales, 4);
        assert!(o.prefix);
        assert_eq!(o.timeout, Some(Duration::from_millis(2500)));
        assert_eq!(o.program, "prog");
        // Options after PROGRAM belong to it.
        assert_eq!(o.args, vec![OsString::from("-n"), OsString::from("x")]);

        let o = run(&["-n2", "--env=A=b=c", "-eX=", "--", "-weird"]);
        assert_eq!(o.locales, 2);
        assert_eq!(
            o.env,
            vec![("A".into(), "b=c".into()), ("X".into(), "".into())]
        );
        assert_eq!(o.program, "-weird");
        assert!(!o.prefix);

        let o = run(&["--locales=3", "-vv", "-v", "a"]);
        assert_eq!((o.locales, o.verbose), (3, 3));
    }

    #[test]
    fn np_is_a_synonym_of_n() {
        for args in [
            &["-np", "4", "prog"][..],
            &["-np4", "prog"][..],
            &["--locales", "4", "prog"][..],
        ] {
            let o = run(args);
            assert_eq!(
                (o.locales, o.program.to_str()),
                (4, Some("prog")),
                "{args:?}"
            );
        }
        for (args, want) in [
            (&["-np", "0", "prog"][..], "-np 0"),
            (
                &["-np", "x", "prog"][..],
                "-np: invalid number of locales 'x'",
            ),
            (&["-np"][..], "'-np' needs a value"),
            (&["-n", "2", "-np", "3", "p"][..], "given twice (2, then 3)"),
        ] {
            match p(args) {
                Err(m) => assert!(m.contains(want), "{args:?}: {m:?} lacks {want:?}"),
                Ok(x) => panic!("{args:?} accepted: {x:?}"),
            }
        }
    }

    #[test]
    fn timeout_comes_from_the_flag_then_the_environment() {
        let secs = |s: u64| Some(Duration::from_secs(s));
        let env = |v: &str| Some(OsString::from(v));
        assert_eq!(job_timeout(None, None), Ok(None));
        assert_eq!(job_timeout(None, env("")), Ok(None));
        assert_eq!(
            job_timeout(None, env("30")),
            Ok(Some(Timeout {
                limit: Duration::from_secs(30),
                source: "PGAS_JOB_TIMEOUT"
            }))
        );
        assert_eq!(
            job_timeout(secs(5), env("30")),
            Ok(Some(Timeout {
                limit: Duration::from_secs(5),
                source: "--timeout"
            }))
        );
        assert_eq!(
            job_timeout(None, env(" 0.5 ")).unwrap().unwrap().limit,
            Duration::from_millis(500)
        );
        for bad in ["soon", "0", "-3", "inf"] {
            for flag in [None, secs(5)] {
                let e = job_timeout(flag, env(bad)).unwrap_err();
                assert!(
                    e.contains("PGAS_JOB_TIMEOUT") && e.contains(&format!("'{bad}'")),
                    "{bad}: {e}"
                );
            }
        }
    }

    #[test]
    fn help_and_version() {
        assert_eq!(p(&["--help"]), Ok(Parsed::Help));
        assert_eq!(p(&["-n", "2", "-h", "x"]), Ok(Parsed::Help));
        assert_eq!(p(&["-V"]), Ok(Parsed::Version));
    }

    #[test]
    fn errors_name_the_bad_value() {
        for (args, want) in [
            (&[][..], "missing -n"),
            (&["prog"][..], "missing -n"),
            (&["-n", "2"][..], "missing PROGRAM"),
            (&["-n", "0", "prog"][..], "-n 0"),
            (&["-n", "1025", "prog"][..], "1025"),
            (&["-n", "abc", "prog"][..], "'abc'"),
            (&["-n", "-3", "prog"][..], "'-3'"),
            (&["-n"][..], "needs a value"),
            (&["--bogus", "prog"][..], "unknown option '--bogus'"),
            (&["-x", "prog"][..], "unknown option '-x'"),
            (&["-n", "2", "--timeout", "soon", "p"][..], "'soon'"),
            (&["-n", "2", "--timeout", "-1", "p"][..], "'-1'"),
            (&["-n", "2", "--timeout", "NaN", "p"][..], "'NaN'"),
            (&["-n", "2", "-e", "NOEQUALS", "p"][..], "'NOEQUALS'"),
            (&["-n", "2", "-e", "=v", "p"][..], "empty variable name"),
            (&["-n", "2", "-e", "PGAS_RANK=3", "p"][..], "set by pgasrun"),
            (&["-n", "2", "-n", "3", "p"][..], "given twice (2, then 3)"),
            (&["-n2", "--locales=2", "p"][..], "given twice"),
            (
                &["-n", "2", "--timeout", "1", "--timeout", "2", "p"][..],
                "'--timeout' given twice",
            ),
            (&["--prefix=yes", "p"][..], "takes no value"),
            (&["-n", "2", "--"][..], "missing PROGRAM"),
        ] {
            match p(args) {
                Err(m) => assert!(m.contains(want), "{args:?}: {m:?} lacks {want:?}"),
                Ok(x) => panic!("{args:?} accepted: {x:?}"),
            }
        }
    }
}
