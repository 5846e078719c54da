//! The three MCM modes, their `PGAS_MCM_MODE` spellings, and (in the
//! submodules, one per mode) the implementors that carry each mode out.
//!
//! A mode is chosen once at start-up (by `comm-ofi`, from what the provider can
//! do, in [`Mode::PREFERENCE`] order unless `PGAS_MCM_MODE` forces one) and then
//! turned into a [`Selector`](crate::Selector) table; nothing matches on the
//! mode per operation.
//!
//! Each submodule reads as one column of the per-operation table in
//! `docs/mcm.md`: `fence` (message-order-fence), `order` (message-order),
//! `dc` (delivery-complete).

use std::fmt;
use std::str::FromStr;

pub(crate) mod dc;
pub(crate) mod fence;
pub(crate) mod order;

/// How the layer makes stores visible and keeps operations ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `message-order-fence`: provider orderings SAS, RMA WAW and atomic WAW,
    /// plus `FI_FENCE`d operations; dangling stores are forced visible by
    /// fenced order GETs (PUTs) or visibility proofs (AMOs), lazily on a bound
    /// context.
    MessageOrderFence,
    /// `message-order`: provider orderings RAW, WAW, SAW, SAS; dangling stores
    /// are forced visible by order GETs, which RAW ordering puts behind them.
    MessageOrder,
    /// `delivery-complete`: every operation carries `FI_DELIVERY_COMPLETE`
    /// and blocking ones wait for it; slowest, the last resort.
    DeliveryComplete,
}

impl Mode {
    /// All modes, in the order start-up tries them (best first).
    pub const PREFERENCE: [Mode; 3] = [
        Mode::MessageOrderFence,
        Mode::MessageOrder,
        Mode::DeliveryComplete,
    ];

    /// The `PGAS_MCM_MODE` spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Mode::MessageOrderFence => "message-order-fence",
            Mode::MessageOrder => "message-order",
            Mode::DeliveryComplete => "delivery-complete",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses a mode spelling; surrounding whitespace and ASCII case are ignored.
/// `auto` is not a mode (comm-ofi's `Config` reads it as "no mode forced").
impl FromStr for Mode {
    type Err = ParseModeError;

    fn from_str(s: &str) -> Result<Mode, ParseModeError> {
        let wanted = s.trim();
        Mode::PREFERENCE
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| ParseModeError {
                value: s.to_owned(),
            })
    }
}

/// A `PGAS_MCM_MODE` value that names no mode. Its message names the value
/// and every valid spelling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseModeError {
    value: String,
}

impl ParseModeError {
    /// The rejected value, as given.
    pub fn value(&self) -> &str {
        &self.value
    }
}

impl fmt::Display for ParseModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid MCM mode {:?}: expected one of ", self.value)?;
        let names: Vec<&str> = Mode::PREFERENCE.iter().map(|m| m.as_str()).collect();
        f.write_str(&names.join(", "))
    }
}

impl std::error::Error for ParseModeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_round_trips_through_its_spelling() {
        for mode in Mode::PREFERENCE {
            assert_eq!(mode.to_string().parse::<Mode>(), Ok(mode));
        }
        assert_eq!("message-order-fence".parse(), Ok(Mode::MessageOrderFence));
        assert_eq!("message-order".parse(), Ok(Mode::MessageOrder));
        assert_eq!("delivery-complete".parse(), Ok(Mode::DeliveryComplete));
    }

    #[test]
    fn parsing_ignores_case_and_surrounding_space() {
        assert_eq!(" Message-Order\n".parse(), Ok(Mode::MessageOrder));
    }

    #[test]
    fn auto_is_not_a_mode() {
        let err = "auto".parse::<Mode>().unwrap_err();
        assert_eq!(err.value(), "auto");
        assert!(!err.to_string().contains("auto,"), "{err}");
    }

    #[test]
    fn bad_value_error_names_value_and_spellings() {
        let err = "message-ordr".parse::<Mode>().unwrap_err();
        assert_eq!(err.value(), "message-ordr");
        let err = "".parse::<Mode>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid MCM mode \"\": expected one of \
             message-order-fence, message-order, delivery-complete"
        );
        // A prefix of a valid spelling is not accepted.
        assert!("message".parse::<Mode>().is_err());
    }
}
