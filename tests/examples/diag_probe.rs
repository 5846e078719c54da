//! Comm diagnostics through the public API (run by `tests/tests/library.rs`
//! on several providers, modes and both local paths, 2 locales): locale 0
//! issues a known mix of operations to locale 1 with counting on, and the
//! counts must match exactly (PUT/GET counts and bytes, non-blocking ones,
//! atomics, on-statements of each kind), with the route-dependent ones
//! checked against the path and mode in force (`path=mapped|fabric`,
//! `mode=<PGAS_MCM_MODE>` arguments): copies on the mapped path, dummy GETs
//! in message-order, fenced operations in message-order-fence, none in
//! delivery-complete. Then: nothing is counted while stopped, the gathered
//! counts agree with each locale's own, reset zeroes them.

use pgas_tests::{check, e};
use runtime_shim::comm_counts::CommCounts;
use std::process::ExitCode;

type R<T = ()> = Result<T, String>;

fn arg(name: &str) -> String {
    std::env::args()
        .find_map(|a| a.strip_prefix(&format!("{name}=")).map(str::to_string))
        .unwrap_or_default()
}

fn run() -> R {
    let path = arg("path");
    let mode = arg("mode");
    let builder = runtime_shim::Builder::new();
    let noop = builder
        .register("diag.noop", |_, _| Vec::new())
        .map_err(e("register"))?;
    let rt = builder.init().map_err(e("init"))?;
    let me = rt.here();
    let n = rt.num_locales();
    check!(n == 2, "run with 2 locales, not {n}");
    let data = rt.alloc_all::<u64>(8).map_err(e("alloc_all"))?;
    let word = rt.alloc_all::<u64>(1).map_err(e("alloc_all"))?;
    rt.barrier().map_err(e("barrier"))?;
    check!(
        rt.comm_diagnostics().map_err(e("snapshot"))? == CommCounts::default(),
        "counting is off by default, yet something was counted"
    );
    rt.reset_comm_diagnostics().map_err(e("reset"))?;
    rt.start_comm_diagnostics().map_err(e("start"))?;
    // Every locale counts before locale 0 starts (else locale 1 could miss
    // the bodies); the barrier's own operations are taken off as a baseline.
    rt.barrier().map_err(e("barrier"))?;
    let base = rt.comm_diagnostics().map_err(e("snapshot"))?;
    let since = |now: CommCounts| {
        let (a, b) = (now.as_array(), base.as_array());
        CommCounts::from_array(std::array::from_fn(|i| a[i] - b[i]))
    };
    let mut mine = CommCounts::default();
    if me == 0 {
        let at = data.at(1).map_err(e("at"))?;
        for i in 0..3u64 {
            rt.put(at.add(i as usize), &[i]).map_err(e("put"))?;
        }
        rt.quiet().map_err(e("quiet"))?;
        let mut two = [0u64; 2];
        for _ in 0..2 {
            rt.get(&mut two, at).map_err(e("get"))?;
        }
        check!(two == [0, 1], "GET read {two:?} after PUTs of 0 and 1");
        rt.put_nb(at.add(4), vec![7u64])
            .map_err(e("put_nb"))?
            .wait()
            .map_err(e("put_nb wait"))?;
        let got = rt
            .get_nb(at.add(4), 1)
            .map_err(e("get_nb"))?
            .wait()
            .map_err(e("get_nb wait"))?;
        check!(got == [7], "non-blocking GET read {got:?}, expected [7]");
        let w = rt.atomic(word.at(1).map_err(e("at"))?);
        for _ in 0..4 {
            w.fetch_add(1).map_err(e("fetch_add"))?;
        }
        rt.on(1, noop, &[]).map_err(e("on"))?;
        rt.on_fast(1, noop, &[]).map_err(e("on_fast"))?;
        rt.on_nb(1, noop, &[]).map_err(e("on_nb"))?;
        mine = since(rt.comm_diagnostics().map_err(e("snapshot"))?);
        println!("diag_probe locale 0 ({path}, {mode}): {mine}");
        let c = mine;
        check!(
            (c.put, c.put_bytes, c.put_nb) == (4, 32, 1),
            "PUTs: {c}; expected put=4 put_bytes=32 put_nb=1"
        );
        check!(
            (c.get, c.get_bytes, c.get_nb) == (3, 40, 1),
            "GETs: {c}; expected get=3 get_bytes=40 get_nb=1"
        );
        check!(
            c.amo_native + c.amo_cpu + c.amo_via_am == 4,
            "atomics: {c}; expected 4 in all"
        );
        check!(
            (c.on_blocking, c.on_fast, c.on_nb) == (1, 1, 1),
            "on-statements: {c}; expected one of each kind"
        );
        match path.as_str() {
            "mapped" => {
                check!(c.rma_local == 7, "mapped path: {c}; every RMA a copy");
                check!(c.amo_cpu == 4, "mapped path: {c}; CPU atomics");
                check!(
                    c.force_get + c.force_proof + c.fenced == 0,
                    "mapped path: {c}; nothing to force through the fabric"
                );
            }
            _ => {
                check!(c.rma_local == 0, "fabric path: {c}; no copies");
                match mode.as_str() {
                    "message-order" => check!(
                        c.force_get > 0,
                        "message-order: {c}; quiet after PUTs forces them with dummy GETs"
                    ),
                    "delivery-complete" => check!(
                        c.force_get == 0 && c.fenced == 0,
                        "delivery-complete: {c}; PUTs complete when delivered, nothing to force"
                    ),
                    "message-order-fence" => check!(
                        c.fenced > 0,
                        "message-order-fence: {c}; fenced operations expected"
                    ),
                    other => return Err(format!("unknown mode argument {other:?}")),
                }
            }
        }
        rt.stop_comm_diagnostics().map_err(e("stop"))?;
        rt.put(at, &[9u64]).map_err(e("put"))?;
        let after = since(rt.comm_diagnostics().map_err(e("snapshot"))?);
        check!(after == mine, "counted while stopped: {mine} -> {after}");
    }
    rt.barrier().map_err(e("barrier"))?;
    rt.stop_comm_diagnostics().map_err(e("stop"))?;
    // Nothing is counted any more on either locale.
    rt.barrier().map_err(e("barrier"))?;
    // Locale 1 ran the bodies (the non-blocking one perhaps after the
    // barrier, or after counting stopped: at least the two blocking ones).
    let own = rt.comm_diagnostics().map_err(e("snapshot"))?;
    let all = rt
        .comm_diagnostics_all()
        .map_err(e("comm_diagnostics_all"))?;
    check!(all.len() == 2, "gathered {} entries", all.len());
    check!(all[me] == own, "gathered {} but own {own}", all[me]);
    check!(
        me != 0 || since(all[0]) == mine,
        "locale 0 gathered {} for itself, had {mine} since the baseline {base}",
        all[0]
    );
    check!(
        all[1].on_handled >= 2 && all[1].on_blocking == 0,
        "gathered counts {} / {}: locale 0 issued, locale 1 handled",
        all[0],
        all[1]
    );
    rt.reset_comm_diagnostics().map_err(e("reset"))?;
    let zero = rt.comm_diagnostics().map_err(e("snapshot"))?;
    check!(zero == CommCounts::default(), "after reset: {zero}");
    rt.barrier().map_err(e("barrier"))?;
    if me == 0 {
        println!("diag_probe ok: 2 locales, {path} path, {mode}");
    }
    rt.finalize().map_err(e("finalize"))
}

fn main() -> ExitCode {
    pgas_tests::exit("diag_probe", run())
}
