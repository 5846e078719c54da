//! The collective service and its clients over loopback: advertisement,
//! collectives, lost locales, and the causes a locale sends before it ends
//! the job.

use super::*;
use crate::wire;

#[test]
fn advertisement_round_trips_and_bad_ones_are_refused() {
    let ad = HubAd {
        token: 0x0123_4567_89ab_cdef,
        port: 4242,
        addrs: vec![Ipv4Addr::new(10, 77, 0, 1), Ipv4Addr::LOCALHOST],
    };
    let raw = ad.encode();
    assert_eq!(HubAd::decode(&raw).unwrap(), ad);
    for cut in 0..raw.len() {
        assert!(HubAd::decode(&raw[..cut]).is_err(), "cut at {cut}");
    }
    let mut extra = raw.clone();
    extra.push(0);
    assert!(HubAd::decode(&extra).is_err());
    let mut fmt = raw;
    fmt[0] = 9;
    assert!(HubAd::decode(&fmt).unwrap_err().contains("format 9"));
    assert!(local_addrs().contains(&Ipv4Addr::LOCALHOST));
}

fn none() -> OnLost {
    Arc::new(|_, _| {})
}

/// An `OnLost` that reports to a channel.
fn recorder() -> (OnLost, mpsc::Receiver<(usize, String)>) {
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    (
        Arc::new(move |r, d| {
            let _ = tx.lock().send((r, d));
        }),
        rx,
    )
}

#[test]
fn a_guarded_locale_closing_before_finalize_is_lost_named() {
    let (lost, got) = recorder();
    let ad = start(4, 0, lost).unwrap();
    let mut cs: Vec<HubClient> = (0..4)
        .map(|r| HubClient::connect(&ad, r, 4, none()).unwrap())
        .collect();
    let (c3, c2, c1) = (cs.pop().unwrap(), cs.pop().unwrap(), cs.pop().unwrap());
    for c in [&c1, &c2] {
        send(&c.writer, &Msg::Guard).unwrap();
    }
    send(&c2.writer, &Msg::Finalized).unwrap();
    // Not guarded (a plain OOB user), finalized, then the lost one.
    drop(c3);
    drop(c2);
    std::thread::sleep(Duration::from_millis(100));
    drop(c1);
    let (rank, detail) = got.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(rank, 1, "{detail}");
    assert!(detail.contains("closed before it finalized"), "{detail}");
    assert!(got.recv_timeout(Duration::from_millis(300)).is_err());
}

/// A client whose service answers with `script`, then closes.
fn watched(
    script: impl FnOnce(&mut TcpStream) + Send + 'static,
) -> mpsc::Receiver<(usize, String)> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        script(&mut s);
    });
    let (lost, got) = recorder();
    let c = HubClient::watch(TcpStream::connect(addr).unwrap(), lost).unwrap();
    std::mem::forget(c);
    got
}

#[test]
fn locale_0_gone_before_it_finalized_is_lost_named() {
    let got = watched(|s| {
        let _ = Msg::Result {
            seq: 0,
            data: vec![],
        }
        .write_to(s);
    });
    let (rank, detail) = got.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(rank, 0);
    assert!(detail.contains("closed before it finalized"), "{detail}");
    // After locale 0's Finalized, its closing is no loss.
    let got = watched(|s| {
        let _ = Msg::Finalized.write_to(s);
    });
    assert!(got.recv_timeout(Duration::from_millis(500)).is_err());
}

#[test]
fn a_locale_ending_the_job_is_reported_by_its_cause_not_its_death() {
    let (lost, got) = recorder();
    let ad = start(3, 0, lost).unwrap();
    let (l2, got2) = recorder();
    let c0 = HubClient::connect(&ad, 0, 3, none()).unwrap();
    let c1 = HubClient::connect(&ad, 1, 3, none()).unwrap();
    let c2 = HubClient::connect(&ad, 2, 3, l2).unwrap();
    send(&c1.writer, &Msg::Guard).unwrap();
    // Locales 0 and 2 wait in a barrier that locale 1 will never join.
    let waiting: Vec<_> = [c0, c2]
        .into_iter()
        .map(|mut c| {
            std::thread::spawn(move || {
                let r = c.collective(0, Op::Barrier, 0, &[]);
                (c, r)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    send(
        &c1.writer,
        &Msg::Abort {
            msg: "aborted: disk on fire".into(),
        },
    )
    .unwrap();
    // The sender hears its cause back (locale 0's process waits for it).
    assert!(c1.stop_heard().wait(Duration::from_secs(10)));
    let cause = "locale 1 aborted: disk on fire";
    assert_eq!(c1.stop_heard().get().as_deref(), Some(cause));
    let mut rest = Vec::new();
    for h in waiting {
        let (c, r) = h.join().unwrap();
        // The collective in flight fails with the cause, not a hang.
        let e = r.unwrap_err().to_string();
        assert!(e.contains(cause), "{e}");
        assert_eq!(c.stop_heard().get().as_deref(), Some(cause));
        rest.push(c);
    }
    drop(c1);
    // The service's locale reports the cause when the connection closes.
    let (rank, said) = got.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(rank, 1);
    assert_eq!(said, cause);
    // A locale that then loses locale 0's service reports the cause too.
    drop(rest);
    let (rank, said) = got2.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!((rank, said.as_str()), (0, cause));
}

#[test]
fn locale_0_gone_after_a_stop_is_reported_by_the_stop() {
    let got = watched(|s| {
        let _ = Msg::Stop {
            reason: "locale 0 aborted: allreduce failed".into(),
        }
        .write_to(s);
    });
    let (rank, said) = got.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(rank, 0);
    assert_eq!(said, "locale 0 aborted: allreduce failed");
}

fn clients(n: usize) -> Vec<HubClient> {
    let ad = start(n, 0, none()).unwrap();
    (0..n)
        .map(|r| HubClient::connect(&ad, r, n, none()).unwrap())
        .collect()
}

#[test]
fn collectives_through_the_service() {
    let cs = clients(3);
    let hs: Vec<_> = cs
        .into_iter()
        .enumerate()
        .map(|(r, mut c)| {
            std::thread::spawn(move || {
                for seq in 0..300u64 {
                    let mine = format!("{r}:{seq}").into_bytes();
                    let got = c.collective(seq, Op::Allgather, 0, &mine).unwrap();
                    let parts = wire::decode_parts(&got, 3).unwrap();
                    for (p, part) in parts.iter().enumerate() {
                        assert_eq!(part, format!("{p}:{seq}").as_bytes());
                    }
                }
                c.collective(300, Op::Barrier, 0, &[]).unwrap();
                let b = if r == 2 { &b"root"[..] } else { &[][..] };
                assert_eq!(c.collective(301, Op::Broadcast, 2, b).unwrap(), b"root");
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

#[test]
fn mismatch_and_a_closed_locale_fail_every_waiter() {
    let mut cs = clients(3);
    let c2 = cs.pop().unwrap();
    let mut c1 = cs.pop().unwrap();
    let mut c0 = cs.pop().unwrap();
    let t = std::thread::spawn(move || c1.collective(0, Op::Allgather, 0, b"x"));
    let e = c0.collective(0, Op::Barrier, 0, &[]);
    let e1 = t.join().unwrap();
    let both = format!("{e:?} {e1:?}");
    assert!(
        both.contains("collective mismatch at collective #0"),
        "{both}"
    );
    assert!(e.is_err() && e1.is_err(), "{both}");
    // Later collectives fail too, without waiting for locale 2.
    assert!(c0.collective(1, Op::Barrier, 0, &[]).is_err());
    drop(c2);

    let mut cs = clients(2);
    let c1 = cs.pop().unwrap();
    let mut c0 = cs.pop().unwrap();
    drop(c1);
    match c0.collective(0, Op::Barrier, 0, &[]) {
        Err(OobError::PeerDied { rank: 1, detail }) => {
            assert!(detail.contains("without joining collective #0"), "{detail}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_wrong_token_is_refused() {
    let mut ad = start(1, 0, none()).unwrap();
    ad.token ^= 1;
    ad.addrs = vec![Ipv4Addr::LOCALHOST];
    let e = HubClient::try_one(
        SocketAddr::from((Ipv4Addr::LOCALHOST, ad.port)),
        ad.token,
        0,
        1,
    )
    .unwrap_err();
    assert!(e.contains("refused"), "{e}");
}
