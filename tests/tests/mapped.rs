//! The intra-node mapped path (`PGAS_LOCAL_PATH=mapped`, comm-ofi's
//! `mapped`): PUT/GET/atomics/on-statements between co-located locales, the
//! MCM probe on it in every mode, a job mixing mapped and fabric pairs (two
//! hosts simulated with `PGAS_TEST_HOSTNAMES`), and the thread budget
//! (threads per locale, workers on the cores the locale owns, no CPU burnt
//! while idle). The probes' checks are asserted as sets
//! (`pgas_tests::expect`): `rma_probe` and `mcm_probe` as on the fabric
//! path, `mapped_probe mixed` its exact count of 2 x 3 x rounds updates per
//! word, every pattern read back and an on-statement to every locale.

use pgas_tests::expect;
use pgas_tests::job::Job;

/// `program ARGS` on `n` locales, verbose, on the mapped path unless `env`
/// names another.
fn job(n: usize, program: &str, args: &[&str], env: &[(&str, &str)]) -> Job {
    let job = Job::example(program, n)
        .args(args)
        .env(&[("PGAS_VERBOSE", "1")])
        .env(env)
        .secs(180);
    match env.iter().any(|(k, _)| *k == "PGAS_LOCAL_PATH") {
        true => job,
        false => job.env(&[("PGAS_LOCAL_PATH", "mapped")]),
    }
}

/// Every locale maps every other one; PUT/GET at every size (1 B .. 4 MiB),
/// every 64-bit AMO and the bad-input checks of the RMA probe pass.
#[test]
fn rma_and_atomics_between_co_located_locales() {
    let r = job(3, "rma_probe", &[], &[("PGAS_PROVIDER", "shm")]).passes(&["rma_probe ok"]);
    r.assert_checks("rma_probe on the mapped path", &expect::rma_probe(3));
    assert!(
        r.stderr
            .contains("mapped (2 of 2 co-located peers) local path")
            && r.stderr.contains("CPU (mapped path) atomics"),
        "the verbose line should say mapped with CPU atomics: {}",
        r.stderr
    );
}

/// The runtime shim's whole API (atomics of every type and op, ordered and
/// unordered, non-blocking and strided RMA, tasks and nested on-statements,
/// collectives, bad input) on the mapped path.
#[test]
fn shim_api_on_the_mapped_path() {
    let r = job(3, "shim_probe", &["all"], &[("PGAS_PROVIDER", "shm")]).succeeds();
    // Every scenario prints its own ok line; `bad` runs last.
    let oks = r
        .stdout
        .lines()
        .filter(|l| l.contains(" ok on shm"))
        .count();
    assert!(
        oks >= 7 && r.stdout.contains("shim_probe bad ok"),
        "{}",
        r.stdout
    );
}

/// With `fabric`, nobody maps anybody and native atomics stay native.
#[test]
fn fabric_path_maps_nothing() {
    let env = [("PGAS_PROVIDER", "shm"), ("PGAS_LOCAL_PATH", "fabric")];
    let r = job(2, "mapped_probe", &["paths"], &env).passes(&[
        "maps L0: [] atomics provider",
        "maps L1: [] atomics provider",
    ]);
    assert!(r.stderr.contains("fabric local path"), "{}", r.stderr);
}

/// Mapped PUT/GET, CPU atomics from co-located locales mixed with AMOs
/// through AMs from the others on the same words, and on-statements, from
/// the main thread and a task at once: exact counts. Run on one host (all
/// mapped) and on two simulated hosts (locales 0 and 1 on host a, 2 on
/// host b: 0-1 mapped, everything with 2 through the fabric). Of the
/// providers here only `sockets` says it reaches other hosts
/// (`FI_REMOTE_COMM`), so the two-host job runs on it.
#[test]
fn mixed_atomics_and_rma_one_host_and_two() {
    let r = job(3, "mapped_probe", &["paths", "mixed"], &[])
        .passes(&["maps L0: [1,2] atomics cpu", "mapped_probe mixed ok"]);
    r.assert_checks("mapped_probe on one host", &expect::mapped_mixed(3, 2000));

    let two_hosts = [
        ("PGAS_TEST_HOSTNAMES", "a,a,b"),
        ("PGAS_PROVIDER", "sockets"),
        ("MAPPED_PROBE_ROUNDS", "500"),
    ];
    let r = job(3, "mapped_probe", &["paths", "mixed"], &two_hosts).passes(&[
        "maps L0: [1] atomics cpu",
        "maps L1: [0] atomics cpu",
        "maps L2: [] atomics cpu",
        "mapped_probe mixed ok",
    ]);
    r.assert_checks(
        "mapped_probe on two simulated hosts",
        &expect::mapped_mixed(3, 500),
    );
    assert!(
        r.stderr
            .contains("mapped (1 of 1 co-located peers) local path"),
        "{}",
        r.stderr
    );
}

fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let at = line
        .find(&format!("{key}="))
        .unwrap_or_else(|| panic!("no {key}= in {line}"));
    let rest = &line[at + key.len() + 1..];
    let end = if rest.starts_with('[') {
        rest.find(']').map(|i| i + 1).unwrap_or(rest.len())
    } else {
        rest.find(' ').unwrap_or(rest.len())
    };
    &rest[..end]
}

/// The two locales' `mapped_probe budget` lines of a run with `env`.
fn budget_lines(env: &[(&str, &str)]) -> Vec<String> {
    let r = job(2, "mapped_probe", &["budget"], env).succeeds();
    let lines: Vec<String> = r
        .stdout
        .lines()
        .filter(|l| l.contains("mapped_probe budget L"))
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    lines
}

/// Two co-located locales on this machine: each runs as many workers as
/// cores it owns, pinned to cores of its own (different from the other
/// locale's), has no more threads than main + workers + AM poller + AM
/// handler + the launcher's watchdog, and while every locale is idle its
/// threads use less than 3 % of a core (they block; a polling progress
/// thread would use most of one).
#[test]
fn thread_budget() {
    let lines = budget_lines(&[("PGAS_PROVIDER", "shm")]);
    let mut cores_seen = Vec::new();
    for l in &lines {
        let threads: usize = field(l, "threads").parse().unwrap();
        let workers: usize = field(l, "workers").parse().unwrap();
        let owned: usize = field(l, "cores_owned").parse().unwrap();
        let idle: f64 = field(l, "idle_cpu_ms").parse().unwrap();
        let avail = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(owned, (avail / 2).max(1), "{l}");
        assert_eq!(workers, owned, "one worker per owned core: {l}");
        assert!(
            threads <= 1 + workers + 2 + 1,
            "main + workers + poller + handler + watchdog: {l}"
        );
        let cores = field(l, "worker_cores")
            .trim_matches(|c| c == '[' || c == ']')
            .to_string();
        if avail >= 2 {
            assert!(
                !cores.contains(',') && !cores.contains('-'),
                "each worker pinned to one core: {l}"
            );
            cores_seen.push(cores);
        }
        assert!(
            idle < 30.0,
            "idle threads used {idle} ms of CPU in one second: {l}"
        );
    }
    if cores_seen.len() == 2 {
        assert_ne!(
            cores_seen[0], cores_seen[1],
            "co-located locales must not share worker cores: {lines:?}"
        );
    }
}

/// Where CQ waits block (`sockets`, provider path) an idle worker waits in
/// the receive queue in the AM poller's place and the covered poller checks
/// on it less and less often: idle, a locale's threads still use less than
/// 3 % of a core (the provider's own threads are not ours to count, and
/// sleep when idle).
#[test]
fn thread_budget_where_cq_waits_block() {
    let lines = budget_lines(&[("PGAS_PROVIDER", "sockets"), ("PGAS_LOCAL_PATH", "fabric")]);
    for l in &lines {
        let idle: f64 = field(l, "idle_cpu_ms").parse().unwrap();
        assert!(
            idle < 30.0,
            "idle threads used {idle} ms of CPU in one second: {l}"
        );
    }
}

/// The MCM probe (RAW, WAW, MP-AM, AMO visibility, MP-atomic, TASK-END,
/// handles) on the mapped path, in every mode (fence mode only sockets
/// has), bound and unbound.
#[test]
fn mcm_probe_in_every_mode() {
    for (provider, mode, rounds, extra) in [
        ("shm", "message-order", "100", None),
        ("shm", "delivery-complete", "100", None),
        (
            "shm",
            "message-order",
            "40",
            Some(("MCM_PROBE_UNBOUND", "1")),
        ),
        ("sockets", "message-order-fence", "5", None),
    ] {
        let mut env = vec![
            ("PGAS_PROVIDER", provider),
            ("PGAS_MCM_MODE", mode),
            ("MCM_PROBE_ROUNDS", rounds),
        ];
        env.extend(extra);
        let mcm = job(3, "mcm_probe", &[], &env);
        let r = mcm.passes(&["mcm_probe ok"]);
        r.assert_checks(
            &mcm.what(),
            &expect::mcm_probe(3, rounds.parse().expect("rounds"), None),
        );
        assert!(
            r.stderr.contains("mapped (2 of 2 co-located peers)"),
            "{provider} {mode}: {}",
            r.stderr
        );
    }
}
