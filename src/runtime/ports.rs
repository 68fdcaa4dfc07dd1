//! The ports through which a host plugs into the runtime: the agent host that
//! runs turns, providers that prepare local children or start external runs,
//! a clock and an id source. The wasm bridge implements each with JS objects;
//! native tests implement them in Rust.

use crate::core::error::Result;
use crate::core::event::SessionEvent;
use crate::core::exec::LocalBoxFuture;
use crate::core::json::Value;
use crate::core::signal::Signal;
use crate::runtime::{Agent, InboxMessage, SteerInbox};

/// Milliseconds since the Unix epoch.
pub trait Clock {
    fn now(&self) -> u64;
}

/// What an id is minted for (a host may format them differently).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdKind {
    Session,
    Message,
}

pub trait IdSource {
    fn new_id(&self, kind: IdKind) -> String;
}

/// One turn of a local member, as the host sees it.
pub struct Turn {
    pub session_id: String,
    pub root_id: String,
    /// The member's full name (`lead`, a path, or its Session id).
    pub name: String,
    /// The direct creator's full name; `None` for the root.
    pub parent_name: Option<String>,
    /// The messages this turn answers, in acceptance order.
    pub input: Vec<InboxMessage>,
    /// Messages steered in while the turn runs: take them at each step.
    pub steer: SteerInbox,
    pub cwd: String,
    /// Aborts on interrupt, disposal or drain.
    pub signal: Signal,
    /// The schema a structured result must match, when one was requested.
    pub output_schema: Option<Value>,
    /// Whether the member has never run a turn, read from its log: a reopened
    /// root or a resumed child that ran before is not on its first turn.
    pub first: bool,
    /// The live handle of the member (to delegate or message from tools).
    pub agent: Agent,
    /// Identity runtime context: the member's full name and its creator's.
    pub context: String,
    /// Return guidance for a local child's first turn (how to report to its creator).
    pub guidance: Option<String>,
    /// The runtime's `toolCallsPerReply`: model hosts run no reply that asks for more.
    pub tool_calls_per_reply: usize,
    /// What this turn may spend when a budget applies (see [`crate::core::budget`]):
    /// a host keeps within it (`OpenAIHost` caps its output tokens to `tokens`).
    pub budget: Option<crate::core::budget::Allowance>,
    /// The member's agent options (its log's): the model and settings to run it with.
    pub agent_options: Option<crate::core::agent_options::AgentOptions>,
    /// The member's preset id (its log's), when it runs with one.
    pub agent_preset: Option<String>,
}

impl Turn {
    /// The input as model-ready text: each message rendered (agents' messages
    /// framed as data), then any return guidance.
    pub fn input_text(&self) -> Vec<String> {
        let mut texts: Vec<String> = self.input.iter().map(crate::runtime::text::render_input).collect();
        if let Some(guidance) = &self.guidance {
            texts.push(guidance.clone());
        }
        texts
    }
}

/// What a turn produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnOutcome {
    /// Why it stopped (default `completed`; an empty host reason reads as `completed` too).
    pub stop_reason: crate::core::result::StopReason,
    /// Assistant messages' contents, in order (see [`crate::core::result::final_output`]).
    pub messages: Vec<Value>,
    /// The accumulated assistant text stream.
    pub text: Option<String>,
    pub structured: Option<Value>,
    pub diagnostic: Option<String>,
    /// What the turn spent (validated where it entered: the bridge refuses bad usage).
    pub usage: Option<crate::core::usage::Usage>,
}

/// Runs turns of local members: the model loop belongs to the host.
pub trait AgentHost {
    fn run_turn(&self, turn: Turn) -> LocalBoxFuture<'static, Result<TurnOutcome>>;

    /// Whether the host's models take image input (seed 003: "the child's
    /// model must accept image input"): when not, input with an image is
    /// refused at admission, never written.
    fn takes_images(&self) -> bool {
        true
    }

    /// Releases host resources of a member leaving residency. A failure is a
    /// teardown failure (`ACTIVATION_TEARDOWN_FAILED`), never a lost result.
    fn release(&self, _session_id: &str) -> LocalBoxFuture<'static, Result<()>> {
        Box::pin(async { Ok(()) })
    }
}

/// Start-time options a provider supports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    pub agent_options: bool,
    pub agent_preset: bool,
    pub output_schema: bool,
    pub depth_limit: bool,
}

/// Asked of a provider while materializing a continuable child's first activation.
pub struct ContinuableCreateRequest {
    pub cwd: String,
    pub session_id: String,
    pub parent: Agent,
    /// Owns preparation only until the initial prompt is accepted.
    pub signal: Signal,
}

/// A provider's detached contribution to a continuable child: data only.
#[derive(Clone, Debug, Default)]
pub struct ContinuableCreateSpec {
    /// Completed-turn prefix of the parent's log, contiguous from seq 0.
    pub seed: Option<Vec<SessionEvent>>,
}

/// The request an external provider's `start` receives.
pub struct StartRequest {
    /// Absolute, resolved before startup.
    pub cwd: String,
    pub agent_preset: Option<String>,
    pub label: String,
    pub prompt: Value,
    pub parent: Agent,
    /// Before publication it cancels startup; after, the run's remaining work.
    pub signal: Signal,
    pub agent_options: Option<Value>,
    pub output_schema: Option<Value>,
    pub max_depth: Option<u64>,
    /// Names this start's run in [`crate::Runtime::emit_run`]: what the run
    /// streams (text, its own tool calls) reaches listeners as the child's,
    /// once the run is the child (dropped before, and after it leaves).
    pub run_token: u64,
}

/// An external execution handle (its own file, `run.rs`: a member keeps it).
pub use super::run::Run;

/// A registered transport for running children.
pub trait Provider {
    fn name(&self) -> String;
    fn capabilities(&self) -> Capabilities;
    /// Descriptive only: tools derive truthful wording from it.
    fn inherits_parent_context(&self) -> bool;
    fn agent_route_defaults(&self) -> Option<(String, String)> {
        None
    }
    /// Whether the provider owns depth enforcement for its external runs
    /// (seed 003's `resolveMaxDepth('provider-managed')`): the tree's depth
    /// limit does not apply to them.
    fn manages_depth(&self) -> bool {
        false
    }
    /// Whether the provider prepares continuable (local) children.
    fn prepares_continuable(&self) -> bool;
    /// Whether the provider starts external runs.
    fn starts_runs(&self) -> bool;
    fn prepare_continuable(
        &self,
        request: ContinuableCreateRequest,
    ) -> LocalBoxFuture<'static, Result<ContinuableCreateSpec>>;
    fn start(&self, request: StartRequest) -> LocalBoxFuture<'static, Result<Box<dyn Run>>>;
    /// The host object behind this provider (the bridge returns it from `getProvider`).
    fn host_object(&self) -> Option<std::rc::Rc<dyn std::any::Any>> {
        None
    }
}
