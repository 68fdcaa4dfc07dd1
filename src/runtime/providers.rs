//! The built-in providers: `spawn` (a fresh child) and `fork` (a child seeded
//! with its parent's completed-turn prefix). Both are local: they contribute
//! creation data only, and the runtime owns everything after.

use crate::core::error::{Quoted, Result};
use crate::core::event::{self, SessionEvent};
use crate::core::exec::LocalBoxFuture;
use crate::core::store::{ReadQuery, Store};
use crate::runtime::ports::{
    Capabilities, ContinuableCreateRequest, ContinuableCreateSpec, Provider, Run, StartRequest,
};
use std::rc::Rc;

pub const SPAWN: &str = "spawn";
pub const FORK: &str = "fork";

/// `spawn` and `fork` over the runtime's store.
pub fn builtin(store: Rc<dyn Store>) -> Vec<Rc<dyn Provider>> {
    vec![Rc::new(Local { fork: false, store: store.clone() }), Rc::new(Local { fork: true, store })]
}

struct Local {
    fork: bool,
    store: Rc<dyn Store>,
}

impl Provider for Local {
    fn name(&self) -> String {
        (if self.fork { FORK } else { SPAWN }).to_owned()
    }

    fn capabilities(&self) -> Capabilities {
        // Only spawn selects an independent preset; fork inherits the parent's composition.
        Capabilities { agent_options: true, agent_preset: !self.fork, output_schema: true, depth_limit: true }
    }

    fn inherits_parent_context(&self) -> bool {
        self.fork
    }

    fn prepares_continuable(&self) -> bool {
        true
    }

    fn starts_runs(&self) -> bool {
        false
    }

    fn prepare_continuable(
        &self,
        request: ContinuableCreateRequest,
    ) -> LocalBoxFuture<'static, Result<ContinuableCreateSpec>> {
        if !self.fork {
            return Box::pin(async { Ok(ContinuableCreateSpec::default()) });
        }
        let store = self.store.clone();
        Box::pin(async move {
            let parent = request.parent.session_id().to_owned();
            let query = ReadQuery { signal: request.signal.clone(), ..ReadQuery::default() };
            let events = request.signal.guard(store.read(&parent, &query)).await?.unwrap_or_default();
            Ok(ContinuableCreateSpec { seed: Some(completed_prefix(events)) })
        })
    }

    fn start(&self, _request: StartRequest) -> LocalBoxFuture<'static, Result<Box<dyn Run>>> {
        let name = self.name();
        Box::pin(async move {
            Err(crate::err!(
                UnsupportedCapability,
                "provider {name} only prepares local children",
                name = Quoted(&name)
            ))
        })
    }
}

/// The parent's log up to and including its last completed turn: contiguous
/// from seq 0 and balanced (no half-finished turn).
pub fn completed_prefix(mut events: Vec<SessionEvent>) -> Vec<SessionEvent> {
    let contiguous = events.iter().enumerate().take_while(|(i, e)| e.seq == *i as u64).count();
    events.truncate(contiguous);
    let end = events.iter().rposition(|e| e.kind == event::TURN_END).map_or(0, |i| i + 1);
    events.truncate(end);
    events
}
