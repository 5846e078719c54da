//! Tasking on a fixed set of worker threads.
//!
//! `PGAS_NUM_WORKERS` threads per locale, started once, each pinned to a core
//! (unless `PGAS_PIN=0`) and bound for life to its own transmit context
//! ([`Hooks::worker_start`] calls `Comm::bind_worker(i)` in worker `i`).
//! Tasks wait in lock-free queues (`crossbeam_queue::SegQueue`): one per
//! worker, fed by tasks that worker creates, and one global queue fed by
//! other threads (the main thread, the AM poller); an idle worker takes from
//! its own queue, then the global one, then steals from the others.
//!
//! A task runs to completion on the thread that started it: it never moves.
//! A task that waits (for a child task, an on-statement's reply, a barrier)
//! does not block its thread: it runs other ready tasks on its own stack
//! ([`Pool::help`]) until what it waits for has happened. So task trees and
//! nested on-statements deeper than the number of workers complete. The
//! price, and the limit: a helped task sits on top of the waiting one, so the
//! waiter resumes only when the helped task is done. That is deadlock-free
//! for fork-join programs (a task waits only for tasks it created, for remote
//! work, or for collectives), not for tasks that wait for a *sibling's
//! continuation* (a producer/consumer pair over a flag with more such pairs
//! than workers); see `docs/embedding.md`.
//!
//! MCM hooks: the creator calls [`Hooks::task_create`] before the child can
//! run; the task calls [`Hooks::task_end`] when its body returns, before
//! anybody waiting for it is released. Jobs of the AM layer (on-statement
//! bodies that are not "fast") run as tasks too, with [`Hooks::on_start`]
//! before the body; the AM layer forces the body's stores visible before it
//! sends the 'done'. Debug builds assert that a task ends on the thread it
//! started on, and that tasks nest properly on a thread.
//!
//! The module's files, one job each (lower ones first; none imports a
//! higher one):
//!
//! | file | job |
//! |---|---|
//! | `hooks.rs` | `Hooks`: what the pool asks of the comm layer (MCM boundaries, idle polling) |
//! | `local.rs` | per-thread state: which worker this is, the running tasks, `NoHelp` |
//! | `pool.rs` | `Pool`: start-up, the queues (push, find, run a task), shutdown, `Spawner` |
//! | `worker.rs` | the worker loop: run, poll for requests while idle, park |
//! | `wait.rs` | help-while-waiting (`Pool::help`, `wait_until`) and `Wakers` |
//! | `join.rs` | `spawn`, `TaskHandle::join`, `Group` and `wait_group` |

mod hooks;
mod join;
mod local;
mod pool;
mod wait;
mod worker;

pub use hooks::{Hooks, NoHooks};
pub use join::{Group, TaskHandle};
pub(crate) use local::NoHelp;
pub use pool::{Pool, PoolConfig, PoolStats};

/// The text of a panic payload.
pub(crate) use amhandler::panic_text;

#[cfg(test)]
mod tests;
