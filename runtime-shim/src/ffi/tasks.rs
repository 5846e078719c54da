//! Tasks: the tasking hooks of a runtime with its own tasks, thread
//! binding, `pgas_begin` / `pgas_task_wait`.

#![allow(clippy::missing_safety_doc)]

use super::common::*;

/// Hook for a runtime with its own tasking: call before a task creates a child.
#[no_mangle]
pub extern "C" fn pgas_task_create() -> c_int {
    ffi(|| rt()?.task_create_hook())
}

/// Hook for a runtime with its own tasking: call when a task ends.
#[no_mangle]
pub extern "C" fn pgas_task_end() -> c_int {
    ffi(|| rt()?.task_end_hook())
}

/// Gives the calling thread (a runtime's own thread that communicates) a
/// transmit context of its own; `pgas_init` binds the thread that calls it.
/// Returns 1 if bound, 0 if none was left (the thread stays unbound:
/// correct, only slower), or a negative error.
#[no_mangle]
pub extern "C" fn pgas_bind_thread() -> c_int {
    ffi(|| rt()?.bind_thread())
}

/// Gives back the context of `pgas_bind_thread` (a boundary: the thread's
/// stores are made visible first); call it before a bound thread exits.
#[no_mangle]
pub extern "C" fn pgas_unbind_thread() -> c_int {
    ffi(|| rt()?.unbind_thread())
}

struct CTask {
    f: TaskFn,
    arg: *mut c_void,
}

// SAFETY: the C caller hands `arg` over to the task (header contract: it
// must be usable from another thread).
unsafe impl Send for CTask {}

impl CTask {
    fn run(self) {
        // SAFETY: the C function and argument the caller gave pgas_begin.
        unsafe { (self.f)(self.arg) }
    }
}

/// Runs `fn(arg)` as a task on a worker thread. With `task` non-NULL it gets
/// a handle for `pgas_task_wait`; with NULL nobody waits (finalize does).
#[no_mangle]
pub unsafe extern "C" fn pgas_begin(
    f: Option<TaskFn>,
    arg: *mut c_void,
    task: *mut *mut PgasTask,
) -> c_int {
    ffi(|| {
        let rt = rt()?;
        let Some(f) = f else {
            return Err(Error::NullPointer { what: "fn" });
        };
        let t = CTask { f, arg };
        if task.is_null() {
            return rt.begin(move || t.run());
        }
        // SAFETY: task is a task slot (header contract).
        let task = unsafe { out(task, "task")? };
        task.set_handle(PgasTask(rt.spawn(move || t.run())?));
        Ok(())
    })
}

/// Waits for a task from `pgas_begin` and releases its handle.
#[no_mangle]
pub unsafe extern "C" fn pgas_task_wait(task: *mut PgasTask) -> c_int {
    ffi(|| {
        // SAFETY: a live task handle, given back for good (header contract).
        unsafe { take_handle(task, "task")? }.0.join()
    })
}
