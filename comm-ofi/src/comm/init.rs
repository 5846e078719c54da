//! [`Comm`]'s start-up: read the environment, learn rank and size from the
//! bootstrap, choose provider and MCM mode (locale 0 decides and the others
//! follow), open fabric, domain, AV, CQs and endpoints, register and map the
//! heaps, exchange names and keys, and start the start-up progress thread.

use super::idle::spawn_startup_progress;
use super::*;
use crate::exchange::{Choice, Registration};

fn exchange_err(what: impl Into<String>) -> Error {
    Error::Exchange(what.into())
}

/// Encodes locale 0's choice for the others (or its error).
fn encode_choice(r: &Result<Selection>) -> Vec<u8> {
    match r {
        Ok(s) => Choice::Chosen {
            provider: s.provider.clone(),
            mode: s.mode.to_string(),
            native_atomics: s.native_atomics,
            domain: s.info.domain_name(),
        },
        Err(e) => Choice::Failed(e.to_string()),
    }
    .encode()
}

impl Comm {
    /// Starts the comm layer from the environment (launcher, env knobs).
    pub fn init() -> Result<Arc<Comm>> {
        Comm::init_config(Config::from_env()?)
    }

    /// Starts the comm layer with the launcher's bootstrap and `cfg` (read
    /// with [`Config::from_env`], then adjusted: the runtime shim's
    /// `Builder` overrides).
    pub fn init_config(cfg: Config) -> Result<Arc<Comm>> {
        // Before the bootstrap's threads and before libfabric is loaded.
        crate::quirks::bound_rxm_memory();
        let oob = bootstrap::from_env()?;
        Comm::init_with(oob, cfg)
    }

    /// Starts the comm layer with an explicit bootstrap and configuration.
    pub fn init_with(oob: Box<dyn Oob>, mut cfg: Config) -> Result<Arc<Comm>> {
        crate::quirks::bound_rxm_memory();
        let me = oob.rank();
        // From here on, peers may come to wait for us: an exit before
        // finalize must fail the job (docs/launcher.md, failure guarantees).
        oob.guard_exit()?;
        crate::peer_timeout::init_from_env()?;
        crate::quirks::restore_default_fault_handlers();

        // Which hosts: shm only reaches locales on this one, the mapped path
        // only those, and co-located locales share the cores.
        let key = crate::mapped::host_key(cfg.test_hostnames.as_deref(), me)?;
        let keys = oob
            .allgather(key.as_bytes())?
            .into_iter()
            .map(|k| String::from_utf8_lossy(&k).into_owned())
            .collect();
        let hosts = HostLayout::new(keys, me);
        // What every locale must have chosen alike (crate::agree).
        crate::agree::check(&oob.allgather(&crate::agree::encode(&[
            ("PGAS_LOCAL_PATH", cfg.local_path.to_string()),
            ("PGAS_AMO_VIA_AM", u8::from(cfg.amo_via_am).to_string()),
            ("PGAS_NATIVE_AMO", u8::from(cfg.native_amo).to_string()),
            ("PGAS_AM_HANDLERS", cfg.am_handlers.to_string()),
        ]))?)?;
        let locality = Locality::of_hosts(&hosts.keys);
        if !cfg.num_workers_set {
            let cores = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1);
            cfg.num_workers = hosts.cores_owned(cores);
        }

        // Locale 0 chooses; the others resolve exactly its choice.
        let req = SelectRequest {
            provider: cfg.provider.clone(),
            mode: cfg.mode,
            locality,
            want_atomics: cfg.native_amo,
        };
        let mine = if me == 0 {
            Some(select::select(&req))
        } else {
            None
        };
        let payload = mine.as_ref().map(encode_choice).unwrap_or_default();
        let choice = oob.broadcast(0, &payload)?;
        let sel = match mine {
            Some(r) => r?,
            None => match Choice::decode(&choice)? {
                Choice::Chosen {
                    provider,
                    mode,
                    native_atomics,
                    domain,
                } => {
                    let mode: Mode = mode
                        .parse()
                        .map_err(|_| exchange_err(format!("bad mode from locale 0: {mode}")))?;
                    select::resolve(&provider, mode, native_atomics, &domain, locality)?
                }
                Choice::Failed(msg) => {
                    return Err(Error::NoProvider(format!(
                        "locale 0 could not start: {msg}"
                    )))
                }
            },
        };
        Comm::open(oob, cfg, sel, hosts)
    }

    fn open(
        oob: Box<dyn Oob>,
        cfg: Config,
        sel: Selection,
        hosts: HostLayout,
    ) -> Result<Arc<Comm>> {
        let me = oob.rank();
        let n = oob.size();
        let info = &sel.info;
        let wait = cfg.cq_wait.unwrap_or(
            if crate::quirks::blocks_on_completion_queues(&sel.provider) {
                WaitMode::Block
            } else {
                WaitMode::Spin
            },
        );
        let max_msg_size = cfg
            .max_msg_size
            .unwrap_or(usize::MAX)
            .min(info.max_msg_size())
            .max(1);
        let prov = ProviderInfo {
            name: sel.provider.clone(),
            mode: sel.mode,
            mr_mode: info.mr_mode(),
            max_msg_size,
            inject_size: info.inject_size(),
            msg_order: info.tx_msg_order(),
            order_granted: select::describe_order(info),
            wait,
            atomics: sel.native_atomics,
            atomic_waw: select::grants_atomic_waw(info),
        };

        let serial = crate::quirks::needs_domain_lock(&prov.name)
            .then(|| std::sync::Arc::new(parking_lot::Mutex::new(())));
        let swept = crate::quirks::sweep_stale_shm_regions(&prov.name);
        if swept > 0 {
            tracing::debug!(swept, "removed stale shm regions left under our pid");
        }
        let fabric = Fabric::open(info)?;
        let domain = Domain::open(&fabric, info)?;
        // Room for every peer's transmit endpoints too: connectionless
        // providers (udp;ofi_rxd) insert the source address of every peer
        // endpoint that talks to us (the original sizes its AV the same way).
        // The transmit-context table: [0] shared by every unbound thread,
        // [1..=workers] one per worker thread, then one per AM handler.
        let wanted = 2 + cfg.am_handlers + cfg.num_workers + cfg.thread_contexts;
        let av_limit = crate::quirks::av_peer_limit(&prov.name, info.ep_cnt());
        let budget = info
            .ep_cnt()
            .saturating_sub(1)
            .max(1)
            .min(cfg.max_tx_contexts.unwrap_or(usize::MAX))
            .min(av_limit.map_or(usize::MAX, |l| (l / n).saturating_sub(1)));
        let num_ctx = budget.min(wanted);
        let layout = Layout::plan(
            num_ctx,
            cfg.am_handlers,
            cfg.num_workers,
            cfg.thread_contexts,
        )
        .map_err(|e| crate::quirks::explain_av_limit(e, &prov.name, av_limit, n, &cfg))?;
        if !layout.workers_bound && num_ctx < wanted && av_limit.is_some() {
            tracing::info!(
                "PGAS_NUM_WORKERS={}: {} reaches at most {} endpoints per locale from {n} \
                 locales; workers share {} transmit contexts",
                cfg.num_workers,
                prov.name,
                av_limit.unwrap_or(0),
                num_ctx
            );
        }
        let av_count = match av_limit {
            Some(_) => n * (num_ctx + 1),
            None => n * (num_ctx + 1) * 2,
        };
        let av = Av::open(&domain, av_count)?;
        let rx_cq = Cq::open(&domain, 1024, wait)?;
        let tx_cq_size = info.tx_size().clamp(64, 4096) + 64;
        let rx_ep = Arc::new(Endpoint::open(&domain, info, &av, &rx_cq)?);

        let mut eps = Vec::with_capacity(num_ctx);
        for _ in 0..num_ctx {
            let cq = Cq::open(&domain, tx_cq_size, wait)?;
            eps.push(Arc::new(Endpoint::open(&domain, info, &av, &cq)?));
        }

        // Register the heap: shared (memfd) when co-located peers may map it.
        let share_local = cfg.local_path.maps_heaps() && hosts.local_count > 1;
        let heap = if share_local {
            match Heap::new_shared(cfg.heap_size) {
                Ok(h) => h,
                Err(e) => {
                    tracing::warn!("{e}; this locale's heap is reached through the fabric");
                    Heap::new(cfg.heap_size)?
                }
            }
        } else {
            Heap::new(cfg.heap_size)?
        };
        let access = crate::heap::HEAP_ACCESS;
        // SAFETY: the heap mapping outlives the MR (drop order in Comm).
        let mr = unsafe { Mr::register(&domain, heap.base(), heap.size(), access, 1)? };
        let endpoint_mr = prov.mr_mode.endpoint();
        let mut tx_mrs = Vec::new();
        if endpoint_mr {
            mr.bind_enable(&rx_ep)?;
            for (i, ep) in eps.iter().enumerate() {
                // SAFETY: as above.
                let m = unsafe {
                    Mr::register(&domain, heap.base(), heap.size(), access, 2 + i as u64)?
                };
                m.bind_enable(ep)?;
                tx_mrs.push(m);
            }
        }
        // The executable's static data, remotely addressable too; moved onto
        // a memfd first (before it is registered) when co-located peers may
        // map it (statics.rs).
        let statics = crate::statics::executable_data();
        let statics_fd = match statics {
            Some(seg) if share_local && cfg.local_path == LocalPath::Mapped => {
                crate::statics::share(seg)
                    .inspect_err(|e| {
                        tracing::warn!(
                            "static data not shared ({e}): co-located locales reach it through \
                             the fabric"
                        )
                    })
                    .ok()
            }
            _ => None,
        };
        let static_mr = match statics {
            Some(seg) => {
                // SAFETY: the executable's writable data segment is mapped
                // for the life of the process, so it outlives the MR.
                let m = unsafe {
                    Mr::register(
                        &domain,
                        seg.base as *mut u8,
                        seg.size as usize,
                        access,
                        1 << 20,
                    )
                };
                match m {
                    Ok(m) => {
                        if endpoint_mr {
                            m.bind_enable(&rx_ep)?;
                        }
                        Some(m)
                    }
                    Err(e) => {
                        tracing::warn!("static data not registered (only the heap is remotely addressable): {e}");
                        None
                    }
                }
            }
            None => None,
        };
        let own_statics = match &static_mr {
            Some(_) => statics.unwrap_or_default(),
            None => crate::statics::StaticSegment::default(),
        };
        let needs_desc = prov.mr_mode.local();
        let order_dummy = heap.alloc(64, 64)?;
        let mapped_block = heap.alloc(crate::mapped::BLOCK_BYTES, 64)?;

        // Exchange endpoint names and heap registrations.
        let own_name = rx_ep.name()?;
        let names = oob.allgather(&own_name)?;
        crate::exchange::check_names(&names, &own_name)?;
        let fi_addrs = av.insert(&crate::exchange::names_for_av(&names, &own_name))?;
        let reg = Registration {
            heap_base: heap.base_addr(),
            heap_size: heap.size() as u64,
            key: mr.key(),
            statics_base: own_statics.base,
            statics_size: own_statics.size,
            static_key: static_mr.as_ref().map_or(0, |m| m.key()),
        };
        let regs = oob.allgather(&reg.encode())?;
        let mut peers = Vec::with_capacity(n);
        for (i, r) in regs.iter().enumerate() {
            let r = Registration::decode(i, r)?;
            peers.push(Peer {
                fi_addr: fi_addrs[i],
                heap_base: r.heap_base,
                heap_size: r.heap_size,
                key: r.key,
                heap_offset: if prov.mr_mode.virt_addr() {
                    0
                } else {
                    r.heap_base
                },
                // Known once the mapping is established, below.
                heap_path: HeapPath::Fabric,
                statics: crate::statics::StaticSegment {
                    base: r.statics_base,
                    size: r.statics_size,
                },
                static_key: r.static_key,
            });
        }

        // Co-located peers' heaps, mapped.
        let mapped = Arc::new(Mapped::establish(
            &*oob,
            &hosts,
            cfg.local_path,
            crate::mapped::OwnHeap {
                base: heap.base_addr(),
                size: heap.size() as u64,
                fd: heap.shared_fd(),
                block_off: mapped_block - heap.base_addr(),
                statics: statics_fd
                    .filter(|_| own_statics.size > 0)
                    .map(|fd| (own_statics, fd)),
                statics_private: cfg.weaken == Some(crate::Weakening::MappedStaticsPrivate),
            },
            &peers
                .iter()
                .map(|p| crate::mapped::PeerRanges {
                    heap: (p.heap_base, p.heap_size),
                    statics: p.statics,
                })
                .collect::<Vec<_>>(),
        )?);
        for (i, p) in peers.iter_mut().enumerate() {
            if let Some(delta) = mapped.delta(i) {
                p.heap_path = HeapPath::Mapped { delta };
            }
        }

        // Every context reaches every locale's order dummy (same heap offset).
        let dummy_off = order_dummy - heap.base_addr();
        let virt = prov.mr_mode.virt_addr();
        let routes: Arc<[Route]> = peers
            .iter()
            .map(|p| Route {
                fi_addr: p.fi_addr,
                order_dummy: RemoteBuf {
                    fi_addr: p.fi_addr,
                    addr: if virt {
                        p.heap_base + dummy_off
                    } else {
                        dummy_off
                    },
                    key: p.key,
                },
            })
            .collect();
        let am_layer: Arc<OnceLock<Arc<dyn AmLayer>>> = Arc::new(OnceLock::new());
        let diag = Arc::new(crate::diag::CommDiagnostics::new());
        let mut contexts = Vec::with_capacity(num_ctx);
        for (i, ep) in eps.into_iter().enumerate() {
            // Private, from the top of the heap: the number of contexts
            // differs between locales (workers per locale), and symmetric
            // allocations made after start-up must not shift with it.
            let scratch = heap.alloc_private(SCRATCH_BYTES, 64)? as *mut u8;
            let desc = match (needs_desc, endpoint_mr) {
                (false, _) => std::ptr::null_mut(),
                (true, false) => mr.desc(),
                (true, true) => tx_mrs[i].desc(),
            };
            contexts.push(TxContext::new(
                i,
                ep,
                scratch,
                desc,
                serial.clone(),
                routes.clone(),
                mapped.clone(),
                am_layer.clone(),
                prov.atomics,
                (prov.inject_size, prov.max_msg_size),
                diag.clone(),
            ));
        }

        // Which atomics are native: none once any locale maps another (CPU
        // atomics on mapped words do not mix with NIC atomics; see mapped.rs).
        let native = if prov.atomics && !mapped.in_use() {
            let ctx = &contexts[0];
            NativeAtomics::probe(|ty, op, form| ctx.atomic_valid(ty, op, form))
        } else {
            NativeAtomics::none()
        };
        // A type is native only where every locale's provider does it so.
        let agreed =
            crate::agree::intersect_masks(&oob.allgather(&native.type_mask().to_le_bytes())?)?;
        let native = native.restrict_types(agreed);
        if info.progresses_by_itself() {
            for ctx in &mut contexts {
                ctx.set_provider_progresses();
            }
        }
        if proves_amos_by_atomic_read(&prov.name, &native) {
            for ctx in &mut contexts {
                ctx.prove_amos_by_atomic_read();
            }
        }

        // delivery-complete's AMO window relies on atomic WAW at the
        // initiator and at the target: on only if every locale was granted
        // it (each asked for it alike; an answer may still differ by host).
        let atomic_waw = if prov.mode == Mode::DeliveryComplete && native.any() {
            let mine = u64::from(prov.atomic_waw).to_le_bytes();
            crate::agree::intersect_masks(&oob.allgather(&mine)?)? != 0
        } else {
            false
        };
        let selector = Selector::weakened(prov.mode, cfg.weaken);
        let selector = if atomic_waw {
            selector.with_atomic_waw()
        } else {
            selector
        };

        let serial_for_rx = serial.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let idle = IdlePolicy::new(&cfg, &prov, &mapped);
        let small_from_rx = crate::quirks::small_messages_from_receive_endpoint(&prov.name)
            && matches!(prov.mode, Mode::MessageOrder | Mode::DeliveryComplete)
            && !idle.may_sleep();
        if small_from_rx {
            for ctx in &mut contexts {
                ctx.send_small_from(rx_ep.clone());
            }
        }
        let progress = spawn_startup_progress(rx_ep.clone(), stop.clone(), serial, idle)?;

        if cfg.weaken.is_some() {
            tracing::warn!(
                weakening = ?cfg.weaken,
                "PGAS_MCM_WEAKEN is set: the memory model is deliberately broken (test-only)"
            );
        }
        let shared_ctx = layout.shared.clone();
        let comm = Comm {
            me,
            n,
            prov,
            selector,
            diag,
            peers: Peers {
                list: peers,
                mapped,
                hosts,
            },
            amos: AmoPlan {
                routes: AmoRoutes::plan(&native, cfg.amo_via_am),
                native,
            },
            contexts: Contexts {
                layout,
                table: ContextTable::new(contexts, shared_ctx),
                work_flag: match cfg.weaken {
                    Some(mcm::Weakening::WorkFlagBeforePost) => WorkFlag::MarkedBefore,
                    Some(mcm::Weakening::NbGetUncounted) => WorkFlag::DerivedWithoutReads,
                    _ => WorkFlag::Derived,
                },
            },
            am: AmSide {
                layer: am_layer,
                rx_serial: serial_for_rx,
                progress: Mutex::new(Some(progress)),
                stop,
                rx_ep,
            },
            mem: Registered {
                _tx_mrs: tx_mrs,
                _static_mr: static_mr,
                mr,
                heap,
                _av: av,
                _domain: domain,
                _fabric: fabric,
            },
            oob,
            cfg,
            finalized: AtomicBool::new(false),
        };
        comm.oob.barrier()?;
        if comm.cfg.verbose > 0 && me == 0 {
            eprintln!("{}", comm.describe());
        }
        tracing::debug!(locale = me, "{}", comm.describe());
        Ok(Arc::new(comm))
    }
}
