//! Locale 0 composes each iteration's outcome from what every locale saw,
//! checks it against the fixture's oracle program and prints the `litmus`
//! line of the (test, size).

use super::env::Part;
use crate::litmus::fixtures::{self, Fixture, Inst};
use crate::litmus::oracle::{amo_count_label, outcome_of};
use crate::litmus::tally::Tally;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::Duration;

pub(super) struct RunCtx {
    pub(super) provider: String,
    pub(super) mode: String,
    pub(super) weaken: String,
    pub(super) show: usize,
    pub(super) allowed: Mutex<BTreeMap<&'static str, BTreeSet<String>>>,
}

/// One (test, size) result.
pub(super) struct Report {
    pub(super) line: String,
    pub(super) details: Vec<String>,
    pub(super) forbidden: usize,
}

impl RunCtx {
    pub(super) fn allowed(&self, base: &'static str) -> BTreeSet<String> {
        let mut m = self.allowed.lock().expect("allowed cache");
        m.entry(base)
            .or_insert_with(|| {
                fixtures::program(base)
                    .expect("every kind has an oracle program")
                    .allowed()
                    .outcomes
            })
            .clone()
    }

    pub(super) fn compose(&self, inst: &Inst, all: &[Vec<u8>], took: Duration) -> Report {
        let base = inst.kind.base();
        let allowed = self.allowed(base);
        // iteration -> what every locale saw
        let mut per: BTreeMap<u64, Part> = BTreeMap::new();
        for (loc, bytes) in all.iter().enumerate() {
            for line in String::from_utf8_lossy(bytes).lines() {
                let mut f = line.splitn(3, '|');
                let it: u64 = f.next().and_then(|s| s.parse().ok()).unwrap_or(u64::MAX);
                let kv = f.next().unwrap_or("");
                let info = f.next().unwrap_or("");
                let ent = per.entry(it).or_default();
                for pair in kv.split(' ').filter(|p| !p.is_empty()) {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    let k = if k == "_fetched" {
                        format!("_fetched{loc}")
                    } else {
                        k.to_string()
                    };
                    ent.kv.push((k, v.to_string()));
                }
                if !info.is_empty() {
                    ent.info.push(info.to_string());
                }
            }
        }
        let mut tally = Tally::default();
        let mut details = Vec::new();
        for (it, Part { kv, info }) in &per {
            let outcome = if inst.kind == Fixture::AmoCount {
                let get = |k: &str| {
                    kv.iter()
                        .find(|(kk, _)| kk == k)
                        .and_then(|(_, v)| v.parse::<u64>().ok())
                        .unwrap_or(0)
                };
                let fetched: Vec<u64> = kv
                    .iter()
                    .filter(|(k, _)| k.starts_with("_fetched"))
                    .flat_map(|(_, v)| v.split(',').filter_map(|x| x.parse().ok()))
                    .collect();
                amo_count_label(get("_end"), get("_start"), &fetched)
            } else {
                outcome_of(kv.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            };
            if tally.record(&outcome, 1, &allowed) && details.len() < self.show {
                details.push(format!(
                    "litmus-forbidden\tprovider={}\tmode={}\tweaken={}\ttest={}\tsize={}\titer={it}\toutcome={outcome}\twhere={}",
                    self.provider,
                    self.mode,
                    self.weaken,
                    inst.name,
                    inst.size,
                    info.join(";")
                ));
            }
        }
        let forbidden = tally.forbidden as usize;
        let line = format!(
            "litmus\tprovider={}\tmode={}\tweaken={}\ttest={}\tbase={base}\tsize={}\titers={}\tms={}\tseen={}\tforbidden={forbidden}\tgaps={}",
            self.provider,
            self.mode,
            self.weaken,
            inst.name,
            inst.size,
            per.len(),
            took.as_millis(),
            tally.histogram("#").join("|"),
            tally
                .gaps(&allowed)
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("|"),
        );
        Report {
            line,
            details,
            forbidden,
        }
    }
}
