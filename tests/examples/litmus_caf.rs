//! The Fortran front end of the litmus engine
//! (`pgas_tests::litmus::front::fortran`) for `scripts/caf-litmus`:
//!
//! ```text
//! litmus_caf emit DIR          # DIR/<program>.f90 and DIR/programs.txt
//!                              # (one line per program: name, images, rounds divisor)
//! litmus_caf check PROGRAM     # reads a run's output on stdin, prints
//!                              # "PROGRAM: F forbidden outcomes in R rounds (...)"
//! ```
//!
//! `check` exits 0 when every outcome is allowed, 1 when some is
//! forbidden, 2 when the output holds no report of the program.

use pgas_tests::litmus::front::fortran::{catalogue, check, emit::emit, find};
use std::io::Read as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["emit", dir] => {
            let dir = std::path::Path::new(dir);
            let mut list = String::new();
            for p in catalogue() {
                let path = dir.join(format!("{}.f90", p.name));
                let src = emit(&p);
                // Unchanged sources keep their time stamp (no rebuild).
                if std::fs::read_to_string(&path).ok().as_deref() != Some(src.as_str()) {
                    if let Err(e) = std::fs::write(&path, src) {
                        eprintln!("litmus_caf: writing {}: {e}", path.display());
                        return ExitCode::from(2);
                    }
                }
                let div = if p.quarter { 4 } else { 1 };
                list.push_str(&format!("{} {} {div}\n", p.name, p.min_images()));
            }
            if let Err(e) = std::fs::write(dir.join("programs.txt"), list) {
                eprintln!("litmus_caf: writing programs.txt: {e}");
                return ExitCode::from(2);
            }
            ExitCode::SUCCESS
        }
        ["check", name] => {
            let Some(p) = find(name) else {
                eprintln!("litmus_caf: no program {name}");
                return ExitCode::from(2);
            };
            let mut out = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut out) {
                eprintln!("litmus_caf: reading the run's output: {e}");
                return ExitCode::from(2);
            }
            let c = check(&p, &out);
            if c.rounds.is_none() {
                return ExitCode::from(2);
            }
            println!("{}", c.line(&p));
            ExitCode::from(u8::from(c.tally.forbidden > 0))
        }
        _ => {
            eprintln!("usage: litmus_caf emit DIR | litmus_caf check PROGRAM < output");
            ExitCode::from(2)
        }
    }
}
