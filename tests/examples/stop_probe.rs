//! After a stopped locale continues, is the job back to speed at once?
//! (issue 39: a locale 0 SIGSTOPped for 30 s and continued left the
//! others' pending on-statements waiting 12-39 s more.) Run by
//! `scripts/chaos stop-recovery`, which stops one locale from outside and
//! notes when it continued:
//!
//! ```text
//! pgasrun -n 3 stop_probe SECONDS
//! ```
//!
//! Every locale does blocking on-statements to every other locale in turn
//! (each answer checked) for SECONDS, and prints each one that took more
//! than 50 ms: `stop_probe slow locale=L target=T end_ms=UNIX_MS took_ms=D`;
//! at the end `stop_probe done locale=L ops=N max_ms=M`, and locale 0
//! `stop_probe ok: ...`.

use pgas_tests::e;
use runtime_shim::{fn_id, pod, Builder, FnId};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const INC: FnId = fn_id("stop_probe.inc");
const SLOW: Duration = Duration::from_millis(50);

fn run() -> Result<(), String> {
    let secs: f64 = pgas_tests::arg(1, "seconds", 20.0)?;
    let b = Builder::new();
    b.register("stop_probe.inc", |_, a| {
        pod::to_bytes(&(pod::from_bytes::<u64>(a).unwrap_or(0) + 1))
    })
    .map_err(e("register"))?;
    let rt = b.init().map_err(e("init"))?;
    let (me, n) = (rt.here(), rt.num_locales());
    if n < 2 {
        return Err("needs 2 or more locales".into());
    }
    rt.barrier().map_err(e("barrier"))?;
    let t0 = Instant::now();
    let (mut ops, mut max) = (0u64, Duration::ZERO);
    while t0.elapsed().as_secs_f64() < secs {
        let t = (me + 1 + (ops as usize % (n - 1))) % n;
        let s = Instant::now();
        let r = rt.on(t, INC, &pod::to_bytes(&ops)).map_err(e("on"))?;
        let took = s.elapsed();
        let got = pod::from_bytes::<u64>(&r).unwrap_or(0);
        if got != ops + 1 {
            return Err(format!(
                "on-statement to locale {t} answered {got}, not {}",
                ops + 1
            ));
        }
        if took > SLOW {
            let end_ms = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis());
            println!(
                "stop_probe slow locale={me} target={t} end_ms={end_ms} took_ms={}",
                took.as_millis()
            );
        }
        max = max.max(took);
        ops += 1;
    }
    println!(
        "stop_probe done locale={me} ops={ops} max_ms={}",
        max.as_millis()
    );
    rt.barrier().map_err(e("barrier"))?;
    pgas_tests::finish(rt, "stop_probe", &format!("{n} locales, {secs} s"))
}

fn main() -> ExitCode {
    pgas_tests::exit("stop_probe", run())
}
