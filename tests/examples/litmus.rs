//! The hand-written litmus suite of `shared/LITMUS.md` under `pgasrun`: the
//! comm-layer front end of the litmus engine
//! (`pgas_tests::litmus::front::comm`, which documents the arguments,
//! environment and output).
//!
//! ```text
//! PGAS_NUM_WORKERS=3 pgasrun -n 3 litmus [TEST,...|all|plain|self|rma|sync|atomic]
//! ```

fn main() -> std::process::ExitCode {
    pgas_tests::litmus::front::comm::main()
}
