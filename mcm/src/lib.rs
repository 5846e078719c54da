//! placeholder until the MCM engine lands: only the mode vocabulary that
//! comm-ofi's provider selection needs.

use std::fmt;
use std::str::FromStr;

/// An MCM conformance mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Fenced operations (`FI_FENCE`), visibility forced lazily per target.
    MessageOrderFence,
    /// RAW/WAW/SAW/SAS message ordering, dummy GETs force visibility.
    MessageOrder,
    /// Every operation waits for delivery completion.
    DeliveryComplete,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::MessageOrderFence => "message-order-fence",
            Mode::MessageOrder => "message-order",
            Mode::DeliveryComplete => "delivery-complete",
        })
    }
}

/// A `PGAS_MCM_MODE` value that names no mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseModeError(pub String);

impl fmt::Display for ParseModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown MCM mode {:?}", self.0)
    }
}

impl std::error::Error for ParseModeError {}

impl FromStr for Mode {
    type Err = ParseModeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "message-order-fence" => Ok(Mode::MessageOrderFence),
            "message-order" => Ok(Mode::MessageOrder),
            "delivery-complete" => Ok(Mode::DeliveryComplete),
            other => Err(ParseModeError(other.to_string())),
        }
    }
}
