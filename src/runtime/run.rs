//! The handle of an external run, as a provider returns it and as its
//! member keeps it. A port hosts implement (re-exported by `ports`), in its
//! own file because the member that holds it and the ports that name the
//! member's handles would otherwise import each other.

use crate::core::error::Result;
use crate::core::exec::LocalBoxFuture;
use crate::core::result::SubagentResult;

/// An external execution handle, owned by the activation registry until disposed.
pub trait Run {
    /// Provider-minted id, unique in this runtime.
    fn id(&self) -> String;
    /// The terminal result; an `Err` is an infrastructure fault.
    fn result(&self) -> LocalBoxFuture<'static, Result<SubagentResult>>;
    /// Cancels remaining work and releases resources; idempotent.
    fn dispose(&self) -> LocalBoxFuture<'static, Result<()>>;
}
