//! One iteration of a fixture on this locale: the owners reset their
//! words, the launcher barrier starts everyone, the acting tasks do the
//! fixture's steps with seeded random spins between them, and each locale
//! records what it saw.

use super::env::{enc, Env, Part, R};
use super::mem::*;
use super::pool::Task;
use super::report::{Report, RunCtx};
use crate::e;
use crate::litmus::fixtures::{Fixture, Inst};
use crate::litmus::rng::{spin_for, Rng};
use crate::litmus::value::Label;
use comm_ofi::{AmoOp, AmoType, Locale};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

impl Env {
    /// TASK-END's parent: reads both children's slots (`a + k` on
    /// `home(k)`) after joining them.
    fn read_children(
        &self,
        s: Slots,
        home: impl Fn(usize) -> Locale,
        (size, id, it): (usize, u64, u64),
    ) -> R<Vec<Label>> {
        (1..=2usize)
            .map(|k| {
                let at = self.slot_on(s.a + k, home(k))?;
                self.read(at, s.cdst + k - 1, size, id, it)
            })
            .collect()
    }

    /// Resets the tested buffer on `owner` (value 0) and the PUT source on
    /// L0 (value 1), the start of most fixtures.
    fn reset_x_src(&self, owner: Locale, s: Slots, inst: &Inst, it: u64) {
        if self.here == owner {
            fill(self.slot(s.x), inst.size, inst.id, it, 0);
        }
        if self.here == 0 {
            fill(self.slot(s.src), inst.size, inst.id, it, 1);
        }
    }

    /// Starts `body` as a task on worker `wk`, with the random stream of
    /// (this locale, that worker) in this iteration.
    fn on_worker<T: Send + 'static>(
        self: &Arc<Self>,
        inst: &Inst,
        it: u64,
        wk: usize,
        body: impl FnOnce(&Arc<Env>, &mut Rng) -> R<T> + Send + 'static,
    ) -> Task<T> {
        let env = self.clone();
        let mut rng = self.rng(inst, it, self.here as u64 * 1000 + wk as u64);
        self.pool.spawn(wk, move || body(&env, &mut rng))
    }

    /// Runs `body` as a task on a random worker of this locale and waits
    /// for it; notes `L<here>:w<worker><extra>` (who ran it).
    fn act<T: Send + 'static>(
        self: &Arc<Self>,
        inst: &Inst,
        it: u64,
        shared: &mut Rng,
        part: &mut Part,
        extra: &str,
        body: impl FnOnce(&Arc<Env>, &mut Rng) -> R<T> + Send + 'static,
    ) -> R<T> {
        let wk = shared.below(self.workers as u64) as usize;
        part.note(format!("L{}:w{wk}{extra}", self.here));
        self.on_worker(inst, it, wk, body).join()
    }

    pub(super) fn iteration(self: &Arc<Self>, inst: &Inst, it: u64) -> R<Part> {
        let here = self.here;
        // Odd and even iterations use different slots: a reader still
        // looking at iteration i's words after the end barrier never races
        // with their owner resetting them for iteration i + 1.
        let s = Slots::of(it);
        let (id, size) = (inst.id, inst.size);
        let mut shared = self.rng(inst, it, u64::MAX);
        let mut part = Part::default();
        // The acting locale's partner, owner of the "remote" words.
        let owner = if inst.selfish { 0 } else { 1 };
        let max = self.max_delay;
        let w = self.workers;
        match inst.kind {
            Fixture::PutSrc => {
                let y = self.slot_on(s.x, owner)?;
                self.reset_x_src(owner, s, inst, it);
                self.start()?;
                if here == 0 {
                    self.act(inst, it, &mut shared, &mut part, "", move |env, rng| {
                        rng.spin(max);
                        let buf = env.slot(s.src);
                        env.comm.put(y, slice(buf, size)).map_err(e("put"))?;
                        rng.spin(max);
                        fill(buf, size, id, it, 2);
                        rng.spin(max);
                        env.task_end()?;
                        // The task signals the reader right away.
                        env.end()
                    })?;
                } else {
                    self.end()?;
                }
                if here == 1 {
                    part.set("r", self.read(y, s.tmp, size, id, it)?.text());
                }
            }
            Fixture::GetDst { nb } => {
                let y = self.slot_on(s.x, owner)?;
                if here == owner {
                    fill(self.slot(s.x), size, id, it, 2);
                }
                if here == 0 {
                    fill(self.slot(s.dst), size, id, it, 0);
                }
                self.start()?;
                if here == 0 {
                    let r = self.act(inst, it, &mut shared, &mut part, "", move |env, rng| {
                        rng.spin(max);
                        let x = env.slot(s.dst);
                        if nb {
                            // SAFETY: waited for right below; never leaked.
                            let h = unsafe { env.comm.get_nb(slice_mut(x, size), y) }
                                .map_err(e("get_nb"))?;
                            rng.spin(max);
                            h.wait().map_err(e("wait"))?;
                        } else {
                            env.comm.get(slice_mut(x, size), y).map_err(e("get"))?;
                        }
                        fill(x, size, id, it, 1);
                        let r = classify(x, size, id, it);
                        rng.spin(max);
                        env.task_end()?;
                        Ok(r)
                    })?;
                    part.set("r", r.text());
                }
                self.end()?;
                if here == 0 {
                    part.set("x", classify(self.slot(s.dst), size, id, it).text());
                }
            }
            Fixture::Raw { nb } => {
                let x = self.slot_on(s.x, owner)?;
                self.reset_x_src(owner, s, inst, it);
                self.start()?;
                if here == 0 {
                    let r = self.act(inst, it, &mut shared, &mut part, "", move |env, rng| {
                        rng.spin(max);
                        let src = slice(env.slot(s.src), size);
                        let dst = env.slot(s.dst);
                        let r = if nb {
                            // SAFETY: waited for (or dropped, which waits) before the buffer goes; never leaked.
                            let h = unsafe { env.comm.put_nb(x, src) }.map_err(e("put_nb"))?;
                            rng.spin(max);
                            env.comm.get(slice_mut(dst, size), x).map_err(e("get"))?;
                            let r = classify(dst, size, id, it);
                            h.wait().map_err(e("wait"))?;
                            r
                        } else {
                            env.comm.put(x, src).map_err(e("put"))?;
                            rng.spin(max);
                            env.comm.get(slice_mut(dst, size), x).map_err(e("get"))?;
                            classify(dst, size, id, it)
                        };
                        env.task_end()?;
                        Ok(r)
                    })?;
                    part.set("r", r.text());
                }
                self.end()?;
            }
            Fixture::Waw { nb } => {
                let x = self.slot_on(s.x, owner)?;
                if here == owner {
                    fill(self.slot(s.x), size, id, it, 0);
                }
                if here == 0 {
                    fill(self.slot(s.src), size, id, it, 1);
                    fill(self.slot(s.src2), size, id, it, 2);
                }
                let reader = shared.below(3) as Locale;
                let reverse = shared.below(2) == 0;
                self.start()?;
                if here == 0 {
                    self.act(
                        inst,
                        it,
                        &mut shared,
                        &mut part,
                        &format!(",reader:L{reader}"),
                        move |env, rng| {
                            rng.spin(max);
                            let (s1, s2) =
                                (slice(env.slot(s.src), size), slice(env.slot(s.src2), size));
                            if nb {
                                // SAFETY: waited for (or dropped, which waits) before the buffer goes; never leaked.
                                let h1 = unsafe { env.comm.put_nb(x, s1) }.map_err(e("put_nb"))?;
                                rng.spin(max);
                                // SAFETY: waited for (or dropped, which waits) before the buffer goes; never leaked.
                                let h2 = unsafe { env.comm.put_nb(x, s2) }.map_err(e("put_nb"))?;
                                rng.spin(max);
                                if reverse {
                                    h2.wait().map_err(e("wait"))?;
                                    h1.wait().map_err(e("wait"))?;
                                } else {
                                    h1.wait().map_err(e("wait"))?;
                                    h2.wait().map_err(e("wait"))?;
                                }
                            } else {
                                env.comm.put(x, s1).map_err(e("put"))?;
                                rng.spin(max);
                                env.comm.put(x, s2).map_err(e("put"))?;
                            }
                            rng.spin(max);
                            env.task_end()?;
                            env.end()
                        },
                    )?;
                } else {
                    self.end()?;
                }
                if here == reader {
                    part.set("r", self.read(x, s.tmp, size, id, it)?.text());
                }
            }
            Fixture::MpAtomic { split } => {
                let d = self.slot_on(s.x, owner)?;
                let f = self.flag_on(F_MP, if split { 2 } else { owner })?;
                // SELF: the reader is L1, reading L0's words.
                let reader = 1;
                self.reset_x_src(owner, s, inst, it);
                let want = stamp(id, it, 1);
                self.start()?;
                if here == 0 {
                    self.act(inst, it, &mut shared, &mut part, "", move |env, rng| {
                        rng.spin(max);
                        env.comm
                            .put(d, slice(env.slot(s.src), size))
                            .map_err(e("put"))?;
                        rng.spin(max);
                        env.amo_write(f, want)?;
                        rng.spin(max);
                        env.task_end()
                    })?;
                } else if here == reader {
                    let r = self.act(inst, it, &mut shared, &mut part, "", move |env, rng| {
                        rng.spin(max);
                        let deadline = Instant::now() + Duration::from_secs(20);
                        while env.amo_read(f)? != want {
                            if Instant::now() > deadline {
                                return Err(format!(
                                    "{}: the flag never became {want:#x}",
                                    "MP-ATOMIC reader"
                                ));
                            }
                            std::thread::yield_now();
                        }
                        let r = env.read(d, s.dst, size, id, it)?;
                        env.task_end()?;
                        Ok(r)
                    })?;
                    part.set("r", r.text());
                }
                self.end()?;
            }
            Fixture::MpAm { nb } => {
                let d = self.slot_on(s.x, owner)?;
                self.reset_x_src(owner, s, inst, it);
                let fast = shared.below(2) == 0;
                self.start()?;
                if here == 0 {
                    let r = self.act(
                        inst,
                        it,
                        &mut shared,
                        &mut part,
                        &format!(",{}", if fast { "fast" } else { "exec" }),
                        move |env, rng| {
                            rng.spin(max);
                            let src = slice(env.slot(s.src), size);
                            let args = enc(&[d.addr, size as u64, id, it]);
                            let on = |env: &Arc<Env>| {
                                let reply = if fast {
                                    env.am.execute_on_fast(d.locale, env.classify_fn, &args)
                                } else {
                                    env.am.execute_on(d.locale, env.classify_fn, &args)
                                }
                                .map_err(e("on-statement"))?;
                                reply
                                    .first()
                                    .map(|c| Label::from_code(*c))
                                    .ok_or_else(|| "empty reply".to_string())
                            };
                            let r = if nb {
                                // SAFETY: waited for (or dropped, which waits) before the buffer goes; never leaked.
                                let h = unsafe { env.comm.put_nb(d, src) }.map_err(e("put_nb"))?;
                                rng.spin(max);
                                let r = on(env)?;
                                h.wait().map_err(e("wait"))?;
                                r
                            } else {
                                env.comm.put(d, src).map_err(e("put"))?;
                                rng.spin(max);
                                on(env)?
                            };
                            env.task_end()?;
                            Ok(r)
                        },
                    )?;
                    part.set("r", r.text());
                }
                self.end()?;
            }
            Fixture::TaskEnd => {
                // coforall loc in L1, L2 on loc { put(a[loc], loc) }; SELF:
                // each child stores into its own locale, the parent GETs.
                for k in 1..=2usize {
                    let slot_owner = if inst.selfish { k } else { 0 };
                    if here == slot_owner {
                        fill(self.slot(s.a + k), size, id, it, 0);
                    }
                }
                self.start()?;
                if here == 0 {
                    let (parent, children, seeds) = parent_and_children(&mut shared, &mut part, w);
                    let selfish = inst.selfish;
                    let r = self
                        .on_worker(inst, it, parent, move |env, _rng| {
                            let mut kids = Vec::new();
                            for (i, &cw) in children.iter().enumerate() {
                                let k = i + 1;
                                let dst_loc = if selfish { k } else { 0 };
                                // The `put` body's arguments: destination
                                // (locale, address), source, size, and the
                                // stamp and delay seed of the child's value.
                                let dst = env.slot_on(s.a + k, dst_loc)?;
                                let src = env.slot_on(s.csrc + k, k)?.addr;
                                let args = enc(&[
                                    dst.locale as u64,
                                    dst.addr,
                                    src,
                                    size as u64,
                                    id,
                                    it,
                                    1,
                                    seeds[i],
                                ]);
                                let env2 = env.clone();
                                kids.push(env.pool.spawn(cw, move || {
                                    env2.am
                                        .execute_on(k, env2.put_fn, &args)
                                        .map_err(e("on-statement"))?;
                                    env2.task_end()
                                }));
                            }
                            for t in kids {
                                t.join()?;
                            }
                            let home = |k: usize| if selfish { k } else { 0 };
                            let r = env.read_children(s, home, (size, id, it))?;
                            env.task_end()?;
                            Ok(r)
                        })
                        .join()?;
                    part.set_children(&r);
                }
                self.end()?;
            }
            Fixture::TaskEndOob => {
                if here == 0 {
                    for k in 1..=2 {
                        fill(self.slot(s.a + k), size, id, it, 0);
                    }
                }
                if here == 1 || here == 2 {
                    fill(self.slot(s.csrc + here), size, id, it, 1);
                }
                self.start()?;
                if here == 1 || here == 2 {
                    let wk = shared.distinct(w, 3)[here];
                    part.note(format!("L{here}:w{wk}"));
                    let a = self.slot_on(s.a + here, 0)?;
                    self.on_worker(inst, it, wk, move |env, rng| {
                        rng.spin(max);
                        env.comm
                            .put(a, slice(env.slot(s.csrc + env.here), size))
                            .map_err(e("put"))?;
                        rng.spin(max);
                        env.task_end()?;
                        // The launcher barrier is the join (it forces
                        // nothing), entered by the task itself.
                        env.end()
                    })
                    .join()?;
                } else {
                    self.end()?;
                }
                if here == 0 {
                    for k in 1..=2 {
                        part.set(
                            &format!("r{k}"),
                            classify(self.slot(s.a + k), size, id, it).text(),
                        );
                    }
                }
            }
            Fixture::TaskEndLocal => {
                // Children on other workers of L0 store to L1 (SELF: to L0),
                // end, and signal the parent, which GETs.
                for k in 1..=2 {
                    if here == owner {
                        fill(self.slot(s.a + k), size, id, it, 0);
                    }
                    if here == 0 {
                        fill(self.slot(s.csrc + k), size, id, it, 1);
                    }
                }
                self.start()?;
                if here == 0 {
                    let (parent, children, seeds) = parent_and_children(&mut shared, &mut part, w);
                    let r = self
                        .on_worker(inst, it, parent, move |env, rng| {
                            let mut kids = Vec::new();
                            for (i, &cw) in children.iter().enumerate() {
                                let k = i + 1;
                                let a = env.slot_on(s.a + k, owner)?;
                                let env2 = env.clone();
                                let mut crng = Rng::new(&[seeds[i]]);
                                kids.push(env.pool.spawn(cw, move || {
                                    crng.spin(max);
                                    env2.comm
                                        .put(a, slice(env2.slot(s.csrc + k), size))
                                        .map_err(e("put"))?;
                                    crng.spin(max);
                                    env2.task_end()
                                }));
                            }
                            for t in kids {
                                t.join()?;
                            }
                            rng.spin(max);
                            let r = env.read_children(s, |_| owner, (size, id, it))?;
                            env.task_end()?;
                            Ok(r)
                        })
                        .join()?;
                    part.set_children(&r);
                }
                self.end()?;
            }
            Fixture::TaskCreate { nb } => {
                let d = self.slot_on(s.x, owner)?;
                self.reset_x_src(owner, s, inst, it);
                self.start()?;
                if here == 0 {
                    let ws = shared.distinct(w, 2);
                    part.note(format!("L0:parent-w{},child-w{}", ws[0], ws[1]));
                    let child = ws[1];
                    let cseed = shared.next();
                    let r = self
                        .on_worker(inst, it, ws[0], move |env, rng| {
                            rng.spin(max);
                            let src = slice(env.slot(s.src), size);
                            let begin = |env: &Arc<Env>| {
                                env.comm.task_create().map_err(e("task_create"))?;
                                let env2 = env.clone();
                                let mut crng = Rng::new(&[cseed]);
                                Ok::<_, String>(env.pool.spawn(child, move || {
                                    crng.spin(max);
                                    let r = env2.read(d, s.dst, size, id, it)?;
                                    env2.task_end()?;
                                    Ok(r)
                                }))
                            };
                            let r = if nb {
                                // SAFETY: waited for (or dropped, which waits) before the buffer goes; never leaked.
                                let h = unsafe { env.comm.put_nb(d, src) }.map_err(e("put_nb"))?;
                                rng.spin(max);
                                let t = begin(env)?;
                                rng.spin(max);
                                h.wait().map_err(e("wait"))?;
                                t.join()?
                            } else {
                                env.comm.put(d, src).map_err(e("put"))?;
                                rng.spin(max);
                                begin(env)?.join()?
                            };
                            env.task_end()?;
                            Ok(r)
                        })
                        .join()?;
                    part.set("r", r.text());
                }
                self.end()?;
            }
            Fixture::SbAtomic => {
                let loc = if inst.selfish { 0 } else { 2 };
                let (x, y) = (self.flag_on(F_X, loc)?, self.flag_on(F_Y, loc)?);
                let want = stamp(id, it, 1);
                self.start()?;
                if here == 0 || here == 1 {
                    let wk = shared.distinct(w, 2)[here];
                    part.note(format!("L{here}:w{wk}"));
                    let (mine, theirs) = if here == 0 { (x, y) } else { (y, x) };
                    // Both actors draw from the same scale, one of 4 x the
                    // calibrated time down to 1/32 of it.
                    let skew = (4 * self.skew_ns.load(Ordering::Relaxed)) >> shared.below(8);
                    let r = self
                        .on_worker(inst, it, wk, move |env, rng| {
                            // A start skew on the scale of the operations
                            // themselves, so that every interleaving shows up.
                            spin_for(Duration::from_nanos(rng.below(skew + 1)));
                            env.amo_write(mine, want)?;
                            let r = env.amo_read(theirs)?;
                            env.task_end()?;
                            Ok(r)
                        })
                        .join()?;
                    part.set(&format!("r{here}"), flag_label(r, id, it));
                }
                self.end()?;
            }
            Fixture::AmoCount => {
                let c = self.flag_on(F_C, 0)?;
                if here == 0 {
                    part.set("_start", self.amo_read(c)?.to_string());
                }
                let k = self.amo_k;
                self.start()?;
                // Every locale (SELF: only the owner, with every worker).
                let acting = !inst.selfish || here == 0;
                if acting {
                    let ws = if inst.selfish {
                        (0..w).collect()
                    } else {
                        shared.distinct(w, 2)
                    };
                    part.note(format!(
                        "L{here}:w{}",
                        ws.iter()
                            .map(|x| x.to_string())
                            .collect::<Vec<_>>()
                            .join("+")
                    ));
                    let tasks: Vec<_> = ws
                        .iter()
                        .map(|&wk| {
                            self.on_worker(inst, it, wk, move |env, rng| {
                                let mut got = Vec::with_capacity(k);
                                for _ in 0..k {
                                    rng.spin(max);
                                    got.push(
                                        env.am
                                            .amo(
                                                &comm_ofi::AmoRequest::new(
                                                    c,
                                                    AmoType::U64,
                                                    AmoOp::Add,
                                                    1,
                                                )
                                                .fetching(true),
                                            )
                                            .map_err(e("fetch_add"))?,
                                    );
                                }
                                env.task_end()?;
                                Ok(got)
                            })
                        })
                        .collect();
                    let mut got = Vec::new();
                    for t in tasks {
                        got.extend(t.join()?);
                    }
                    part.set(
                        "_fetched",
                        got.iter()
                            .map(|v| v.to_string())
                            .collect::<Vec<_>>()
                            .join(","),
                    );
                }
                self.end()?;
                if here == 0 {
                    part.set("_end", self.amo_read(c)?.to_string());
                }
            }
        }
        Ok(part)
    }
}

/// TASK-END's workers on L0: a parent and two children, distinct and
/// noted, and a seed for each child's random stream.
fn parent_and_children(
    shared: &mut Rng,
    part: &mut Part,
    w: usize,
) -> (usize, Vec<usize>, [u64; 2]) {
    let ws = shared.distinct(w, 3);
    part.note(format!(
        "L0:parent-w{},children-w{}/w{}",
        ws[0], ws[1], ws[2]
    ));
    let seeds = [shared.next(), shared.next()];
    (ws[0], ws[1..].to_vec(), seeds)
}

impl Env {
    /// Runs one instance on this locale; locale 0 returns the report.
    pub(super) fn run(self: &Arc<Self>, inst: &Inst, ctx: &RunCtx) -> R<Option<Report>> {
        let started = Instant::now();
        if inst.kind == Fixture::SbAtomic {
            self.calibrate(inst)?;
        }
        let mut lines = String::new();
        for it in 0..inst.iters as u64 {
            let part = self.iteration(inst, it)?;
            lines.push_str(&format!(
                "{it}|{}|{}\n",
                part.kv
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                part.info.join(",")
            ));
        }
        let all = self
            .comm
            .oob()
            .allgather(lines.as_bytes())
            .map_err(e("allgather"))?;
        // Everything settled before the next instance starts.
        self.comm.barrier().map_err(e("barrier"))?;
        if self.here != 0 {
            return Ok(None);
        }
        let mut rep = ctx.compose(inst, &all, started.elapsed());
        if inst.kind == Fixture::SbAtomic {
            rep.line.push_str(&format!(
                "\tskew_ns={}",
                self.skew_ns.load(Ordering::Relaxed)
            ));
        }
        Ok(Some(rep))
    }

    /// SB-ATOMIC's start skew: the slower of the two actors' time for one
    /// atomic write and read of the test words (median of 15), agreed by all.
    fn calibrate(self: &Arc<Self>, inst: &Inst) -> R {
        let loc = if inst.selfish { 0 } else { 2 };
        let mine = self.flag_on(if self.here == 0 { F_X } else { F_Y }, loc)?;
        let v = stamp(inst.id, 0, 0);
        let ns = if self.here <= 1 {
            self.pool
                .spawn(0, {
                    let env = self.clone();
                    move || {
                        let mut t = Vec::new();
                        for _ in 0..15 {
                            let t0 = Instant::now();
                            env.amo_write(mine, v)?;
                            env.amo_read(mine)?;
                            t.push(t0.elapsed().as_nanos() as u64);
                        }
                        t.sort_unstable();
                        env.task_end()?;
                        Ok(t[t.len() / 2])
                    }
                })
                .join()?
        } else {
            0
        };
        let all = self
            .comm
            .oob()
            .allgather(&ns.to_le_bytes())
            .map_err(e("allgather"))?;
        let skew = all
            .iter()
            .filter_map(|b| {
                b.get(..8)
                    .map(|b| u64::from_le_bytes(b.try_into().expect("8")))
            })
            .max()
            .unwrap_or(0);
        self.skew_ns.store(skew, Ordering::Relaxed);
        Ok(())
    }
}
