//! Start-up agreement on what must be the same on every locale.
//!
//! Exists because some decisions are taken by each process from its own
//! environment and provider, yet only work if every locale took the same
//! one: the route of a type's atomics (a NIC atomic and a CPU atomic on one
//! word are not atomic with respect to each other, so one locale doing a
//! type natively while another sends it to the owner's CPU would lose
//! updates), whether a non-fetching atomic via AM may be postponed (safe
//! only if the *target* applies a context's AMs in order, which depends on
//! the target's handler count), and whether co-located locales map each
//! other. Knobs are compared and a job whose locales disagree is refused
//! naming the knob and the locales; measured capabilities (which atomic
//! types the provider does natively) are intersected instead, since a
//! locale cannot choose them.

use crate::error::{Error, Result};

/// One locale's values of the knobs that must agree, as `(name, value)`.
pub type KnobValues<'a> = &'a [(&'static str, String)];

/// Encodes `values` for the exchange (`name=value` lines).
pub fn encode(values: KnobValues<'_>) -> Vec<u8> {
    let mut out = String::new();
    for (name, value) in values {
        out.push_str(name);
        out.push('=');
        out.push_str(value);
        out.push('\n');
    }
    out.into_bytes()
}

/// Checks that every locale's record (`records[locale]`, from [`encode`])
/// holds the same value of each knob; the error names the first knob that
/// differs, each distinct value and the locales that have it.
pub fn check(records: &[Vec<u8>]) -> Result<()> {
    let parsed: Vec<Vec<(String, String)>> = records
        .iter()
        .map(|r| {
            String::from_utf8_lossy(r)
                .lines()
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect();
    let Some(first) = parsed.first() else {
        return Ok(());
    };
    for (i, (name, _)) in first.iter().enumerate() {
        // value -> locales, in order of first appearance.
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for (locale, rec) in parsed.iter().enumerate() {
            let value = rec
                .get(i)
                .filter(|(k, _)| k == name)
                .map_or("(not sent)".to_string(), |(_, v)| v.clone());
            match groups.iter_mut().find(|(v, _)| *v == value) {
                Some((_, ls)) => ls.push(locale),
                None => groups.push((value, vec![locale])),
            }
        }
        if groups.len() > 1 {
            let what = groups
                .iter()
                .map(|(v, ls)| {
                    let has = if ls.len() > 1 { "have" } else { "has" };
                    format!("{} {has} {v:?}", locales_text(ls))
                })
                .collect::<Vec<_>>()
                .join(", ");
            return Err(Error::Disagree {
                knob: name.clone(),
                values: what,
            });
        }
    }
    Ok(())
}

/// `locale 3` or `locales 0-2, 5`.
fn locales_text(ls: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut k = 0;
    while k < ls.len() {
        let start = ls[k];
        let mut end = start;
        while k + 1 < ls.len() && ls[k + 1] == end + 1 {
            k += 1;
            end = ls[k];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        k += 1;
    }
    let plural = ls.len() > 1;
    format!(
        "locale{} {}",
        if plural { "s" } else { "" },
        parts.join(", ")
    )
}

/// The intersection of every locale's native-type mask (bit `i`: type
/// `AmoType::ALL[i]` is done natively as a whole), each sent as 8 bytes
/// little-endian.
pub fn intersect_masks(records: &[Vec<u8>]) -> Result<u64> {
    let mut all = u64::MAX;
    for (locale, r) in records.iter().enumerate() {
        let bytes: [u8; 8] = r.as_slice().try_into().map_err(|_| {
            Error::Exchange(format!(
                "locale {locale} sent {} bytes of native atomic types, not 8",
                r.len()
            ))
        })?;
        all &= u64::from_le_bytes(bytes);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(v: &[(&'static str, &str)]) -> Vec<u8> {
        let owned: Vec<(&'static str, String)> =
            v.iter().map(|(k, x)| (*k, x.to_string())).collect();
        encode(&owned)
    }

    #[test]
    fn equal_records_agree() {
        let r = rec(&[("PGAS_AMO_VIA_AM", "0"), ("PGAS_AM_HANDLERS", "1")]);
        check(&[r.clone(), r.clone(), r]).unwrap();
        check(&[]).unwrap();
    }

    #[test]
    fn a_difference_names_the_knob_the_values_and_the_locales() {
        let a = rec(&[("PGAS_AMO_VIA_AM", "0"), ("PGAS_AM_HANDLERS", "1")]);
        let b = rec(&[("PGAS_AMO_VIA_AM", "0"), ("PGAS_AM_HANDLERS", "2")]);
        let e = check(&[a.clone(), a.clone(), b, a])
            .unwrap_err()
            .to_string();
        assert!(e.contains("PGAS_AM_HANDLERS"), "{e}");
        assert!(e.contains("locales 0-1, 3 have \"1\""), "{e}");
        assert!(e.contains("locale 2 has \"2\""), "{e}");
        assert!(!e.contains("PGAS_AMO_VIA_AM"), "{e}");
    }

    #[test]
    fn native_masks_intersect() {
        let m = |x: u64| x.to_le_bytes().to_vec();
        assert_eq!(intersect_masks(&[m(0b1110), m(0b0111)]).unwrap(), 0b0110);
        assert!(intersect_masks(&[m(1), vec![1, 2]]).is_err());
    }
}
