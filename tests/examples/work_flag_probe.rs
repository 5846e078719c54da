//! The cached "this thread has work to force" flag, made to fail on demand:
//! run by `tests/tests/mcm.rs` under `pgasrun -n 2`.
//!
//! Why it exists: the flag (`CTX_HAS_WORK`) lets a boundary skip a context
//! with nothing dangling (`Comm::force_visible_if_any`). A PUT that first
//! settles the thread's postponed AMOs may, while it waits for them, run
//! other work on the same thread whose boundary clears the flag; the PUT
//! must mark the flag after that (issue 21). The multi-process litmus cell
//! for it (`work-flag-before-post`) needs a PUT to land late on loopback and
//! now catches it too rarely to be asserted, so this probe builds the
//! interleaving itself, deterministically: an AM layer of its own postpones
//! every non-fetching AMO and, when the PUT awaits it, runs a task end
//! (`Comm::task_end`) on the same thread, as a helping wait would.
//!
//! Locale 0 (bound to a context, fabric path): a postponed add to a word of
//! locale 1, a PUT to locale 1 (which settles the add, running the task end
//! inside), then `force_visible_if_any` with the comm diagnostics counting.
//! It must force the PUT (one dummy GET at least; message-order); it prints
//! `work_flag_probe ok: forced N` or exits non-zero with `skipped the PUT`.
//! Locale 1 serves (the provider's progress) until locale 0 is done.

use comm_ofi::{AmLayer, AmoOp, AmoReply, AmoRequest, AmoType, Comm, PostponedAmo, ProofRequest};
use pgas_tests::e;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

/// Postpones every non-fetching AMO (nothing is sent: the probe never reads
/// the word) and runs a task end on the awaiting thread.
#[derive(Debug, Default)]
struct TaskEndWhileAwaiting {
    comm: OnceLock<Arc<Comm>>,
}

impl AmLayer for TaskEndWhileAwaiting {
    fn prepare_proof(&self, _target: comm_ofi::Locale) -> comm_ofi::Result<ProofRequest> {
        Err(comm_ofi::Error::Unsupported(
            "work_flag_probe's AM layer proves nothing (no native AMOs here)".into(),
        ))
    }
    fn await_proof(&self, _req: ProofRequest) -> comm_ofi::Result<()> {
        Ok(())
    }
    fn cancel_proof(&self, _req: ProofRequest) {}
    fn may_postpone(&self) -> bool {
        true
    }
    fn send_amo(&self, req: &AmoRequest, postpone: bool) -> comm_ofi::Result<AmoReply> {
        if !postpone {
            return Err(comm_ofi::Error::Unsupported(
                "work_flag_probe's AM layer only postpones".into(),
            ));
        }
        Ok(AmoReply::Postponed(PostponedAmo {
            target: req.target.locale,
            token: 1,
        }))
    }
    fn await_postponed(&self, _amo: PostponedAmo) -> comm_ofi::Result<()> {
        // What a helping wait does: another task of this thread ends here,
        // and its boundary re-derives the flag from the context, which holds
        // nothing at this moment (the postponed AMO was taken out of it).
        self.comm.get().expect("installed").task_end()
    }
}

fn run() -> Result<(), String> {
    let comm = Comm::init().map_err(e("init"))?;
    let word = comm.alloc(8, 8).map_err(e("alloc"))?;
    comm.barrier().map_err(e("barrier"))?;
    if comm.here() == 0 {
        let layer = Arc::new(TaskEndWhileAwaiting::default());
        let _ = layer.comm.set(comm.clone());
        comm.install_am_layer(layer);
        if !comm.bind_thread().map_err(e("bind"))? {
            return Err("no transmit context to bind the main thread to".into());
        }
        let there = comm.symmetric(word, 1).map_err(e("symmetric"))?;
        comm.amo_on_route(
            comm_ofi::AmoRoute::Cpu,
            &AmoRequest::new(there, AmoType::U64, AmoOp::Add, 1),
        )
        .map_err(e("postponed add"))?;
        comm.put(there, &7u64.to_le_bytes()).map_err(e("PUT"))?;
        let diag = comm.diagnostics();
        diag.reset();
        diag.start();
        comm.force_visible_if_any()
            .map_err(e("force_visible_if_any"))?;
        diag.stop();
        let forced = diag.snapshot().get(comm_ofi::Counter::ForceGet);
        if forced == 0 {
            return Err(
                "force_visible_if_any skipped the PUT: the work flag said nothing to force".into(),
            );
        }
        comm.unbind_thread().map_err(e("unbind"))?;
        comm.barrier().map_err(e("barrier"))?;
        comm.finalize().map_err(e("finalize"))?;
        println!("work_flag_probe ok: forced {forced}");
        return Ok(());
    }
    comm.barrier().map_err(e("barrier"))?;
    comm.finalize().map_err(e("finalize"))?;
    Ok(())
}

fn main() -> ExitCode {
    pgas_tests::exit("work_flag_probe", run())
}
