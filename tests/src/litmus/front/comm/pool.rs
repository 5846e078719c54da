//! Worker threads, each bound to its own transmit context: the tasks of
//! the comm-layer front end run on them.

use crate::e;
use comm_ofi::Comm;
use std::sync::{mpsc, Arc};

type R<T = ()> = Result<T, String>;

pub(super) type Job = Box<dyn FnOnce() + Send>;

pub(super) struct Pool {
    tx: Vec<mpsc::Sender<Job>>,
}

pub(super) struct Task<T>(mpsc::Receiver<R<T>>, usize);

impl<T> Task<T> {
    pub(super) fn join(self) -> R<T> {
        self.0
            .recv()
            .map_err(|_| format!("worker {} died (panicked)", self.1))?
    }
}

impl Pool {
    pub(super) fn start(comm: &Arc<Comm>, n: usize) -> R<Pool> {
        let mut tx = Vec::new();
        let (ready_tx, ready_rx) = mpsc::channel::<R>();
        for w in 0..n {
            let (jtx, jrx) = mpsc::channel::<Job>();
            let comm = comm.clone();
            let ready = ready_tx.clone();
            std::thread::Builder::new()
                .name(format!("litmus-w{w}"))
                .spawn(move || {
                    let r = comm.bind_worker(w).map_err(e("bind_worker"));
                    let ok = r.is_ok();
                    let _ = ready.send(r);
                    drop(comm);
                    if ok {
                        while let Ok(job) = jrx.recv() {
                            job();
                        }
                    }
                })
                .map_err(e("spawn worker"))?;
            tx.push(jtx);
        }
        for _ in 0..n {
            ready_rx.recv().map_err(e("worker start"))??;
        }
        Ok(Pool { tx })
    }

    /// Runs `f` as a task on worker `w`.
    pub(super) fn spawn<T: Send + 'static>(
        &self,
        w: usize,
        f: impl FnOnce() -> R<T> + Send + 'static,
    ) -> Task<T> {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move || {
            let _ = tx.send(f());
        });
        let _ = self.tx[w].send(job);
        Task(rx, w)
    }
}
