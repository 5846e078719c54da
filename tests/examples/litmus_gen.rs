//! The generated litmus programs under `pgasrun`: the Rust API front end of
//! the litmus engine (`pgas_tests::litmus::front::shim`, which documents
//! the arguments, environment, output and watchdog).
//!
//! ```text
//! PGAS_NUM_WORKERS=3 pgasrun -n 4 litmus_gen [FAMILY,...|all] [ITERS]
//! ```

fn main() -> std::process::ExitCode {
    pgas_tests::litmus::front::shim::main()
}
