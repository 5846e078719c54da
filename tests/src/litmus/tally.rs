//! The engine's tally of one program's outcomes (the same for every front
//! end): how many iterations, which outcomes how often, how many the oracle
//! forbids, and the allowed outcomes never seen (coverage gaps).

use std::collections::{BTreeMap, BTreeSet};

/// Outcomes of one program (or one fixture at one size) in one job.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Iterations recorded.
    pub iters: u64,
    /// Iterations whose outcome is not allowed.
    pub forbidden: u64,
    /// Outcome -> iterations that had it.
    pub seen: BTreeMap<String, u64>,
}

impl Tally {
    /// Records `count` iterations with `outcome`; whether it is forbidden.
    pub fn record(&mut self, outcome: &str, count: u64, allowed: &BTreeSet<String>) -> bool {
        self.iters += count;
        *self.seen.entry(outcome.to_string()).or_insert(0) += count;
        let bad = !allowed.contains(outcome);
        if bad {
            self.forbidden += count;
        }
        bad
    }

    /// The allowed outcomes never seen.
    pub fn gaps<'a>(&self, allowed: &'a BTreeSet<String>) -> Vec<&'a String> {
        allowed
            .iter()
            .filter(|o| !self.seen.contains_key(*o))
            .collect()
    }

    /// The histogram as `outcome<sep>count` items.
    pub fn histogram(&self, sep: &str) -> Vec<String> {
        self.seen
            .iter()
            .map(|(o, n)| format!("{o}{sep}{n}"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_outcomes_and_gaps_are_counted() {
        let allowed: BTreeSet<String> = ["r=1", "r=0"].iter().map(|s| s.to_string()).collect();
        let mut t = Tally::default();
        assert!(!t.record("r=1", 3, &allowed));
        assert!(t.record("r=old", 2, &allowed));
        assert_eq!((t.iters, t.forbidden), (5, 2));
        assert_eq!(t.gaps(&allowed), vec!["r=0"]);
        assert_eq!(t.histogram("#"), vec!["r=1#3", "r=old#2"]);
    }
}
