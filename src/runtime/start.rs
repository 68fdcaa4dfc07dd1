//! `start_activation`: admission, names at admission, and publication.
//!
//! Admission is synchronous and checks, in this order: unknown provider,
//! `childId` on a non-local provider, an invalid `maxDepth`, each requested
//! capability (`agentOptions`, `agentPreset`, `outputSchema` and its subset,
//! `depthLimit`, a budget on a local child only), the name's grammar,
//! content, the exact live parent, depth, the budgets on the parent's chain
//! (`BUDGET_EXHAUSTED`), capacity, draining, and finally the name's uniqueness among the parent's
//! committed and reserved children. Passing admission reserves the name and a
//! capacity slot in the same synchronous step, so two concurrent starts can
//! never both win a name, or both take a budget's last spawn. The provider
//! is touched only after all of it.
//!
//! Publication is the single catalog write (payload v3 with the name) to the
//! parent's log. The reservation is released when that write commits or when
//! startup fails; there is no second write and no rollback.

use super::machine::{Adopted, Lane, Life, Tree};
use super::member::{self, Delivery, InboxMessage, Kind, Member, MemberState, MessageSource, Scheduling, Settlement};
use super::{Agent, RunInfo, Runtime, RuntimeEvent, TraceRequest};
use crate::core::agent_options::AgentOptions;
use crate::core::catalog::{CatalogEntry, Mode};
use crate::core::error::{Quoted, Result, SubagentError};
use crate::core::event::{self, SessionEvent};
use crate::core::exec::Deferred;
use crate::core::json::{Value, MAX_SAFE_INTEGER};
use crate::core::name::{self, AgentName};
use crate::core::result::{normalize_content, SubagentResult};
use crate::core::schema::OutputSchema;
use crate::core::signal::Signal;
use crate::core::store::ReadQuery;
use crate::core::trace::TraceContext;
use crate::core::usage::{Rollup, Totals};
use crate::runtime::ports::{ContinuableCreateRequest, IdKind, Provider, Run, StartRequest};
use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;

/// One managed child execution and its result delivery.
pub struct ActivationSpec {
    /// Registered provider to use.
    pub provider: String,
    /// Short task label kept in the catalog.
    pub label: String,
    /// Requested name; omitted selects the first free `agent-N`.
    pub name: Option<String>,
    /// Reserved identity for a local child.
    pub child_id: Option<String>,
    /// The child's first user message (a string or content blocks).
    pub prompt: Value,
    pub parent: Agent,
    /// Cancellation before publication; later cancellation is `dispose`.
    pub signal: Signal,
    pub delivery: Delivery,
    pub cwd: Option<String>,
    pub agent_preset: Option<String>,
    pub agent_options: Option<Value>,
    pub output_schema: Option<Value>,
    /// Absolute depth cap for this child (needs `depthLimit`).
    pub max_depth: Option<f64>,
    /// What the child's subtree may spend (local children only), clamped to
    /// what its creators' budgets have left.
    pub budget: Option<crate::core::budget::Budget>,
    /// The delegation tool call making this start, named in its `subagent/start`.
    pub tool_call: Option<u64>,
}

impl ActivationSpec {
    pub fn new(provider: &str, parent: &Agent, label: &str, prompt: &str) -> ActivationSpec {
        ActivationSpec {
            provider: provider.into(),
            label: label.into(),
            name: None,
            child_id: None,
            prompt: Value::from(prompt),
            parent: parent.clone(),
            signal: Signal::new(),
            delivery: Delivery::Parent,
            cwd: None,
            agent_preset: None,
            agent_options: None,
            output_schema: None,
            max_depth: None,
            budget: None,
            tool_call: None,
        }
    }

    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// A started child. Disposal addresses this exact activation, never a later resume.
#[derive(Clone)]
pub struct Activation {
    pub child_id: String,
    /// Full name: the path from the root, or the Session id below an unnamed creator.
    pub name: String,
    /// The accepted initial message, for local children.
    pub message_id: Option<String>,
    /// The child's effective budget (clamped to its creators' remaining), if it has one.
    pub budget: Option<crate::core::budget::Budget>,
    pub(crate) runtime: Runtime,
    pub(crate) member: Rc<Member>,
    pub(crate) settlement: Rc<Settlement>,
}

impl std::fmt::Debug for Activation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Activation({} {})", self.name, self.child_id)
    }
}

impl Activation {
    /// Settles after teardown and the parent notice; a capture failure rejects.
    /// The result carries its member's own and subtree usage (`totals`),
    /// read from the logs once it settled (an external run's is what it
    /// reported); unreadable logs make them incomplete.
    pub fn result(&self) -> impl Future<Output = Result<SubagentResult>> + 'static {
        let settled = self.settlement.result.wait();
        let (runtime, id, external) = (self.runtime.clone(), self.member.id.clone(), self.member.is_external());
        async move {
            let mut result = settled.await?;
            let totals = if external {
                let own = Totals { usage: result.usage.unwrap_or_default(), ..Totals::default() };
                Rollup { own, subtree: own }
            } else {
                runtime
                    .rollup_of(&id, &Signal::never())
                    .await
                    .unwrap_or(Rollup { own: Totals::unknown(), subtree: Totals::unknown() })
            };
            result.totals = Some(totals);
            Ok(result)
        }
    }

    /// Stops and releases only this activation; idempotent. A teardown failure
    /// rejects with `ACTIVATION_TEARDOWN_FAILED` and keeps the captured result.
    pub fn dispose(&self) -> impl Future<Output = Result<()>> + 'static {
        self.runtime.close(&self.member, true);
        self.settlement.disposed.wait()
    }

    /// The teardown outcome once the activation settles, without stopping it
    /// (what `dispose` resolves with).
    pub fn teardown(&self) -> impl Future<Output = Result<()>> + 'static {
        self.settlement.disposed.wait()
    }

    /// The child's live handle, for local children while resident.
    pub fn agent(&self) -> Option<Agent> {
        (!self.member.is_external() && self.member.phase() == member::Phase::Live).then(|| Agent(self.member.clone()))
    }

    pub fn is_external(&self) -> bool {
        self.member.is_external()
    }

    /// The child's residency number (see [`Agent::incarnation`]).
    pub fn incarnation(&self) -> u64 {
        self.member.incarnation
    }
}

/// Where a new resident member sits: its identity, names and log length.
struct Placement<'a> {
    id: &'a str,
    full_name: &'a str,
    path: Option<String>,
    next_seq: u64,
    trace: Option<TraceContext>,
}

/// What admission decided and reserved.
struct Admission {
    provider: Rc<dyn Provider>,
    parent: Rc<Member>,
    name: AgentName,
    /// The local child's id (externals learn theirs from the provider).
    child_id: Option<String>,
    depth: u32,
    cwd: String,
    prompt: Value,
    schema: Option<Rc<OutputSchema>>,
    max_depth: Option<u64>,
    /// The child's effective budget.
    budget: Option<crate::core::budget::Budget>,
    /// The child's agent options: a local child's merged over its creator's
    /// (in-process providers); an external run's as requested.
    agent_options: Option<AgentOptions>,
    /// A local child's preset (named by spawn, else its creator's); an external run's as requested.
    agent_preset: Option<String>,
    /// The catalog write: `None` until tried, then its seq, or `Some(None)`
    /// when it failed (it may still have landed: its budgets count it).
    catalog: Cell<Option<Option<u64>>>,
}

impl Runtime {
    /// Starts a local or external child (see the module doc for the check order).
    pub async fn start_activation(&self, spec: ActivationSpec) -> Result<Activation> {
        let admission = self.admit(&spec)?;
        // The rest is the runtime's own task: an admitted start always ends
        // by committing or releasing its name and slot.
        let rt = self.clone();
        self.detached(async move { rt.start_admitted(spec, admission).await }).await
    }

    async fn start_admitted(&self, spec: ActivationSpec, admission: Admission) -> Result<Activation> {
        let started = if admission.child_id.is_some() {
            self.start_local(&spec, &admission).await
        } else {
            self.start_external(&spec, &admission).await
        };
        if started.is_err() {
            self.release_admission(&admission, None);
        }
        self.tree_changed(&admission.parent.root_id);
        // A parent whose only owned work was this start may settle now.
        self.kick(&admission.parent);
        started
    }

    fn admit(&self, spec: &ActivationSpec) -> Result<Admission> {
        let provider = self.get_provider(&spec.provider).ok_or_else(|| {
            crate::err!(NoProvider, "no provider named {} is registered", name::quote_truncated(&spec.provider, 80))
        })?;
        let local = provider.prepares_continuable();
        if spec.child_id.is_some() && !local {
            return Err(crate::err!(
                UnsupportedCapability,
                "provider {} starts external runs, which mint their own ids; childId is only for local children",
                Quoted(&spec.provider)
            ));
        }
        let max_depth = match spec.max_depth {
            None => None,
            Some(d) if d.is_finite() && d >= 0.0 && d.fract() == 0.0 && d <= MAX_SAFE_INTEGER => Some(d as u64),
            Some(d) => {
                return Err(crate::err!(
                    InvalidArgument,
                    "maxDepth must be a non-negative safe integer, not {}",
                    crate::core::json::number_text(d)
                ))
            }
        };
        let caps = provider.capabilities();
        let unsupported = |what: &str| {
            crate::err!(UnsupportedCapability, "provider {} does not support {what}", Quoted(&spec.provider))
        };
        if spec.agent_options.is_some() && !caps.agent_options {
            return Err(unsupported("agentOptions"));
        }
        let requested = spec.agent_options.as_ref().map(|v| AgentOptions::from_value(v, "agentOptions")).transpose()?;
        // The provider's own route sits under the tool's and caller's overrides (seed 003).
        let route = provider.agent_route_defaults().map(|(provider, model)| AgentOptions {
            provider: Some(provider),
            model: Some(model),
            ..AgentOptions::default()
        });
        let agent_options = AgentOptions::merged(requested.as_ref(), route.as_ref());
        if spec.agent_preset.is_some() && (!caps.agent_preset || provider.inherits_parent_context()) {
            return Err(unsupported("agentPreset"));
        }
        let schema = match &spec.output_schema {
            Some(_) if !caps.output_schema => return Err(unsupported("outputSchema")),
            Some(schema) => Some(Rc::new(OutputSchema::parse(schema)?)),
            None => None,
        };
        if max_depth.is_some() && !caps.depth_limit {
            return Err(unsupported("maxDepth (depthLimit)"));
        }
        if spec.budget.is_some() && !local {
            return Err(crate::err!(
                UnsupportedCapability,
                "provider {} starts external runs: a budget bounds local children (an external run's usage counts in its creators' budgets)",
                Quoted(&spec.provider)
            ));
        }
        let requested_name = spec.name.as_deref().map(AgentName::parse).transpose()?;
        let prompt = normalize_content(spec.prompt.clone()).ok_or_else(|| {
            crate::err!(InvalidArgument, "prompt must be a string or an array of content blocks with a type")
        })?;
        self.0.options.limits.check_activation(&spec.label, &prompt, spec.max_depth)?;
        if local {
            self.check_modalities(&prompt, spec.name.as_deref().unwrap_or("the new child"))?;
        }
        let parent = spec.parent.0.clone();
        // A dead, forged or foreign handle carries no authority (PARENT_UNAVAILABLE is
        // a child's word for a creator that is not live, not an answer to a bad handle).
        if self.require_live(&spec.parent, "parent").is_err() || parent.is_external() {
            return Err(crate::err!(
                Unauthorized,
                "the parent handle for {} is not a live member of this runtime; reopen the member under its root for a live handle",
                name::quote_truncated(&parent.full_name, 80)
            ));
        }
        let depth = parent.depth + 1;
        // A provider that manages depth owns it for its external runs: only an explicit maxDepth applies.
        let limit = match max_depth {
            Some(d) if provider.manages_depth() => d,
            None if provider.manages_depth() => u64::MAX,
            Some(d) => d.min(self.0.options.max_depth as u64),
            None => self.0.options.max_depth as u64,
        };
        if depth as u64 > limit {
            return Err(crate::err!(
                DepthExceeded,
                "a child of {} would be at depth {depth}, deeper than the limit {limit}",
                Quoted(&parent.full_name)
            ));
        }

        let cwd = self.resolve_cwd(&parent, spec.cwd.as_deref())?;
        // A local child's preset: spawn's, else its creator's (fork and omission join it).
        // Resolved (and a refusal returned) before anything is reserved.
        let agent_preset = if local {
            super::presets::child_preset(
                &self.0.options.presets,
                spec.agent_preset.as_deref(),
                parent.agent_preset.as_deref(),
            )?
        } else {
            spec.agent_preset.clone()
        };
        // In-process children run with their own options over a preset spawn named, over their
        // creator's (a joined preset is already in the creator's options, under its overrides).
        let agent_options = if local {
            let named = spec.agent_preset.as_ref().and(agent_preset.as_ref());
            let preset = named.and_then(|p| self.0.options.presets.get(p));
            let own = AgentOptions::merged(agent_options.as_ref(), preset.and_then(|p| p.agent_options.as_ref()));
            AgentOptions::merged(own.as_ref(), parent.agent_options.as_ref())
        } else {
            agent_options.filter(|o| !o.is_empty())
        };
        // Checked here and reserved below with no await between: a spent
        // budget on the creator's chain (spawns counting starts in flight) refuses.
        let chain: Vec<String> = super::budget::chain_of(&parent).into_iter().map(str::to_owned).collect();
        let chain: Vec<&str> = chain.iter().map(String::as_str).collect();
        self.check_budget(&parent, true, || format!("{} cannot start a child", Quoted(&parent.full_name)))?;
        let budget = spec.budget.map(|b| {
            let room = self.with_tree(&parent.root_id, |t| t.remaining(&chain)).unwrap_or_default();
            b.clamp(&room)
        });
        // Minted before the state is borrowed: a host's id source may call back into the runtime.
        let minted = (local && spec.child_id.is_none()).then(|| self.new_id(IdKind::Session));
        let mut st = self.0.state.borrow_mut();
        let st = &mut *st;
        let tree = st
            .trees
            .get_mut(&parent.root_id)
            .ok_or_else(|| crate::err!(ParentUnavailable, "the tree of {} is not open", Quoted(&parent.full_name)))?;
        if tree.full(self.0.options.capacity) {
            return Err(crate::err!(
                ActivationLimitReached,
                "this tree already has {} live children, its capacity",
                self.0.options.capacity
            ));
        }
        if tree.is_draining() {
            return Err(crate::err!(Draining, "this tree is draining and admits no new children"));
        }
        let name = match requested_name {
            Some(name) => {
                let reserved = st.reservations.get(&parent.id).is_some_and(|r| r.contains(name.as_str()));
                if st.of(&parent).child_names.contains(name.as_str()) || reserved {
                    return Err(crate::err!(
                        DuplicateName,
                        "agent name {} is already taken among the children of {}",
                        Quoted(name.as_str()),
                        Quoted(&parent.full_name)
                    ));
                }
                name
            }
            // From the creator's kept floor and hint: flat in the number of
            // children it has had and of its starts in flight.
            None => st.default_name(&parent),
        };
        let child_id = if local {
            let id = spec.child_id.clone().or(minted).unwrap_or_default();
            if id.is_empty() || st.members.contains_key(&id) || st.materializing.contains(&id) {
                return Err(crate::err!(
                    DuplicateChild,
                    "session {} is already live or being created",
                    name::quote_truncated(&id, 80)
                ));
            }
            st.materializing.insert(id.clone());
            Some(id)
        } else {
            None
        };
        st.reservations.entry(parent.id.clone()).or_default().insert(name.as_str().to_owned());
        if let Some(tree) = st.trees.get_mut(&parent.root_id) {
            tree.admit(&chain);
        }
        Ok(Admission {
            cwd,
            provider,
            parent,
            name,
            child_id,
            depth,
            prompt,
            schema,
            max_depth,
            budget,
            agent_options,
            agent_preset,
            catalog: Cell::new(None),
        })
    }

    /// Releases the name reservation and the capacity slot; on commit the
    /// name joins the parent's committed names and the slot becomes live.
    fn release_admission(&self, admission: &Admission, committed_child: Option<&str>) {
        if committed_child.is_none() {
            self.default_name_freed(&admission.parent.id, admission.name.as_str());
        }
        let mut st = self.0.state.borrow_mut();
        if let Some(names) = st.reservations.get_mut(&admission.parent.id) {
            names.remove(admission.name.as_str());
            if names.is_empty() {
                st.reservations.remove(&admission.parent.id);
            }
        }
        if let Some(id) = &admission.child_id {
            st.materializing.remove(id);
        }
        if let Some(tree) = st.trees.get_mut(&admission.parent.root_id) {
            let catalog = admission.catalog.get();
            let record = catalog.flatten().map(|seq| (admission.parent.id.as_str(), seq));
            let chain = super::budget::chain_of(&admission.parent);
            tree.admitted(&chain, committed_child, catalog.is_some(), record, admission.budget);
        }
        if committed_child.is_some() {
            let parent = st.of_mut(&admission.parent);
            parent.child_names.insert(admission.name.as_str().to_owned());
            parent.life.child_joined();
        }
    }

    /// Re-checks, after an await, what admission checked before it.
    fn still_admissible(&self, spec: &ActivationSpec, admission: &Admission) -> Result<()> {
        spec.signal.check()?;
        if self.require_live(&spec.parent, "parent").is_err() {
            return Err(crate::err!(
                ParentUnavailable,
                "the parent {} left before its child was published",
                Quoted(&admission.parent.full_name)
            ));
        }
        let draining = self.0.state.borrow().trees.get(&admission.parent.root_id).is_none_or(Tree::is_draining);
        if draining {
            return Err(crate::err!(Draining, "this tree began draining before the child was published"));
        }
        Ok(())
    }

    fn child_names(&self, admission: &Admission, child_id: &str) -> (String, Option<String>) {
        let path = crate::core::name::join_path(admission.parent.path.as_deref(), Some(&admission.name));
        (path.clone().unwrap_or_else(|| child_id.to_owned()), path)
    }

    /// Publication: the catalog fact, written once to the parent's log.
    async fn publish(&self, admission: &Admission, entry: &CatalogEntry) -> Result<()> {
        // A sibling entry whose write was reported failed may have landed
        // since admission: the name is checked again against the log.
        let unique = |parent: &Member| unique_name(parent, admission);
        let written =
            self.append_if(&admission.parent, vec![(event::CATALOG.to_owned(), entry.to_payload())], unique).await;
        // Only a store failure leaves it unknown whether the entry landed.
        admission.catalog.set(match &written {
            Ok(seq) => Some(Some(*seq)),
            Err(e) if e.code == crate::core::error::ErrorCode::PersistenceUnavailable => Some(None),
            Err(_) => None,
        });
        written?;
        self.emit(RuntimeEvent::Catalog {
            root_id: admission.parent.root_id.clone(),
            parent_id: admission.parent.id.clone(),
            entry: entry.clone(),
        });
        Ok(())
    }

    async fn start_local(&self, spec: &ActivationSpec, admission: &Admission) -> Result<Activation> {
        let Some(child_id) = admission.child_id.clone() else {
            return Err(crate::err!(ContinuationUnavailable, "no child id was reserved"));
        };
        if spec.child_id.is_some() {
            // Guarded: a store that ignores the signal cannot hold a cancelled start.
            let query = ReadQuery::types(&[event::SESSION_START], &spec.signal);
            let exists = spec.signal.guard(self.0.store.read(&child_id, &query)).await?;
            if exists.is_some() {
                return Err(crate::err!(
                    DuplicateChild,
                    "session {} already exists in the store",
                    name::quote_truncated(&child_id, 80)
                ));
            }
        }
        let request = ContinuableCreateRequest {
            cwd: admission.cwd.clone(),
            session_id: child_id.clone(),
            parent: spec.parent.clone(),
            signal: spec.signal.clone(),
        };
        let prepared = spec.signal.guard(admission.provider.prepare_continuable(request)).await?;
        let seed = prepared.seed.unwrap_or_default();
        for (i, e) in seed.iter().enumerate() {
            if e.seq != i as u64 {
                return Err(crate::err!(
                    InvalidArgument,
                    "provider {} returned a seed that is not contiguous from seq 0 (event {i} has seq {})",
                    Quoted(&spec.provider),
                    e.seq
                ));
            }
        }
        // Balanced, as fork's own prefix is: a turn begun in the seed ended there
        // (else the child would inherit a lost turn as its own first history).
        if let Some(open) = open_turn(&seed) {
            return Err(crate::err!(
                InvalidArgument,
                "provider {} returned a seed whose turn at seq {open} never ends: a seed stops after a completed turn",
                Quoted(&spec.provider)
            ));
        }
        self.still_admissible(spec, admission)?;

        // The child's log: the seed, its start marker, and the accepted first prompt.
        let created_at = self.now();
        let (full_name, path) = self.child_names(admission, &child_id);
        let inherited = seed.len() as u64;
        let message_id = self.new_id(IdKind::Message);
        let first = InboxMessage {
            id: message_id.clone(),
            source: MessageSource::User,
            content: admission.prompt.clone(),
            scheduling: Scheduling::Queue,
            meta: Default::default(),
        };
        let start = Value::object([
            ("version", Some(Value::from(1u64))),
            ("inheritedEventCount", Some(Value::from(inherited))),
            ("parentId", Some(Value::from(admission.parent.id.as_str()))),
            ("rootId", Some(Value::from(admission.parent.root_id.as_str()))),
            ("createdAt", Some(Value::from(created_at))),
            ("cwd", Some(Value::from(admission.cwd.as_str()))),
            ("label", Some(Value::from(spec.label.as_str()))),
            ("name", Some(Value::from(admission.name.as_str()))),
            ("provider", Some(Value::from(spec.provider.as_str()))),
            ("delivery", Some(Value::from(spec.delivery.as_str()))),
            // Its effective options, before its first turn (every turn and resume reads them here).
            ("agentOptions", admission.agent_options.as_ref().map(AgentOptions::to_value)),
            ("agentPreset", admission.agent_preset.as_deref().map(Value::from)),
        ]);
        let mut events = seed;
        events.push(SessionEvent::new(inherited, event::SESSION_START, start));
        events.push(SessionEvent::new(inherited + 1, event::MESSAGE, super::message::message_payload(&first)));
        // Written with the log it belongs to: a member never exists without its trace.
        let trace = self.trace_for(&TraceRequest {
            session_id: &child_id,
            root_id: &admission.parent.root_id,
            parent_id: Some(&admission.parent.id),
            name: &full_name,
            label: &spec.label,
            provider: &spec.provider,
            tool_call: spec.tool_call,
        });
        if let Some(t) = &trace {
            events.push(SessionEvent::new(inherited + 2, event::TRACE, t.to_payload()));
        }
        let log_len = events.len() as u64;
        // Until publication the caller's cancellation owns the start, even while the store
        // writes: a log that lands after an abort has no catalog fact, so it is never listed.
        let written = self.0.store.append(&child_id, events);
        spec.signal.guard(async { written.await.map_err(|e| super::persistence(&child_id, e)) }).await?;
        self.still_admissible(spec, admission)?;
        if let Some(budget) = &admission.budget {
            // In the root's log, with the tree's other budgets, before the
            // child exists: a start that fails after it leaves a budget of nobody.
            let root = self.0.state.borrow().members.get(&admission.parent.root_id).cloned();
            if let Some(root) = root {
                let payload = crate::core::budget::event_payload(&child_id, Some(budget));
                self.append(&root, vec![(event::BUDGET.to_owned(), payload)]).await?;
            }
            self.still_admissible(spec, admission)?;
        }

        let entry = CatalogEntry {
            id: child_id.clone(),
            created_at,
            mode: Mode::Continuable,
            label: Some(spec.label.clone()),
            name: Some(admission.name.clone()),
        };
        self.publish(admission, &entry).await?;

        let settlement = Settlement::new(spec.delivery);
        let place = Placement { id: &child_id, full_name: &full_name, path, next_seq: log_len, trace };
        let member = self.make_resident(spec, admission, place, Kind::Local, &settlement, admission.schema.clone());
        let adopted = Adopted { pending: vec![first], parked: false, spent: false, ran: false, last: None };
        member.write(|s| s.life.adopt(Lane::Local, adopted));
        self.emit(RuntimeEvent::Start(RunInfo {
            tool_call: spec.tool_call,
            ..self.run_info(&member, Mode::Continuable)
        }));
        self.emit(RuntimeEvent::Message {
            root_id: member.root_id.clone(),
            session_id: child_id.clone(),
            name: full_name.clone(),
            message_id: message_id.clone(),
            kind: "user",
            from: None,
            content: self.listened().then(|| admission.prompt.clone()),
        });
        self.kick(&member);
        Ok(Activation {
            child_id,
            name: full_name,
            message_id: Some(message_id),
            budget: admission.budget,
            runtime: self.clone(),
            member,
            settlement,
        })
    }

    async fn start_external(&self, spec: &ActivationSpec, admission: &Admission) -> Result<Activation> {
        if spec.delivery == Delivery::Caller {
            // No catalog write re-checks the name: a log left unsure by a write
            // of unknown outcome is taken in first (found by sim seed 9321).
            self.check_known(&admission.parent, |parent| unique_name(parent, admission)).await?;
        }
        // The provider's signal: the caller's before publication, then ours (interrupt, dispose, drain).
        let run_signal = Signal::new();
        let published = Rc::new(Cell::new(false));
        {
            let (run_signal, published) = (run_signal.clone(), published.clone());
            spec.signal.on_abort(move || {
                if !published.get() {
                    run_signal.abort();
                }
            });
        }
        let token = self.token();
        let request = StartRequest {
            run_token: token,
            cwd: admission.cwd.clone(),
            agent_preset: spec.agent_preset.clone(),
            label: spec.label.clone(),
            prompt: admission.prompt.clone(),
            parent: spec.parent.clone(),
            signal: run_signal.clone(),
            agent_options: admission.agent_options.as_ref().map(AgentOptions::to_value),
            output_schema: spec.output_schema.clone(),
            max_depth: admission.max_depth,
        };
        let started = self.race_start(admission.provider.start(request), &spec.signal).await?;
        let run: Rc<dyn Run> = Rc::from(started);
        let id = run.id();
        let admissible = self.still_admissible(spec, admission).and_then(|()| {
            let st = self.0.state.borrow();
            if id.is_empty() || st.members.contains_key(&id) || st.materializing.contains(&id) {
                Err(crate::err!(
                    DuplicateChild,
                    "provider {} returned run id {}, which is empty or already live",
                    Quoted(&spec.provider),
                    name::quote_truncated(&id, 80)
                ))
            } else {
                Ok(())
            }
        });
        if let Err(e) = admissible {
            // Ownership transferred on fulfilment: clean up before rejecting.
            let _ = run.dispose().await;
            return Err(e);
        }
        let created_at = self.now();
        let (full_name, path) = self.child_names(admission, &id);
        let entry = CatalogEntry {
            id: id.clone(),
            created_at,
            mode: Mode::External,
            label: Some(spec.label.clone()),
            name: Some(admission.name.clone()),
        };
        if spec.delivery == Delivery::Parent {
            if let Err(e) = self.publish(admission, &entry).await {
                let _ = run.dispose().await;
                return Err(e);
            }
        }
        published.set(true);

        let settlement = Settlement::new(spec.delivery);
        let kind = Kind::External { run: run.clone(), signal: run_signal, result: Deferred::new(), token };
        let place = Placement { id: &id, full_name: &full_name, path, next_seq: 0, trace: None };
        let member = self.make_resident(spec, admission, place, kind, &settlement, None);
        // Caller delivery keeps no catalog entry, so its name is not committed.
        if spec.delivery == Delivery::Caller {
            admission.parent.write(|s| s.child_names.remove(admission.name.as_str()));
            self.reset_default_floor(&admission.parent.id);
        }
        self.emit(RuntimeEvent::Start(RunInfo { tool_call: spec.tool_call, ..self.run_info(&member, Mode::External) }));
        self.watch_run(&member);
        Ok(Activation {
            child_id: id,
            name: full_name,
            message_id: None,
            budget: None,
            runtime: self.clone(),
            member,
            settlement,
        })
    }

    /// Awaits a provider's `start`, or the caller's abort; a run that arrives
    /// after an abort is disposed in the background, never leaked.
    async fn race_start(
        &self,
        start: crate::core::exec::LocalBoxFuture<'static, Result<Box<dyn Run>>>,
        signal: &Signal,
    ) -> Result<Box<dyn Run>> {
        signal.check()?;
        // `None` once the caller aborted first.
        let slot: Rc<Deferred<Option<StartOutcome>>> = Rc::new(Deferred::new());
        {
            let slot = slot.clone();
            self.spawn(Box::pin(async move {
                let out = start.await.map(Rc::<dyn Run>::from);
                let run = out.as_ref().ok().cloned();
                if !slot.set(Some(out)) {
                    // The caller aborted first: the run is ours to clean up.
                    if let Some(run) = run {
                        let _ = run.dispose().await;
                    }
                }
            }));
        }
        {
            let slot = slot.clone();
            signal.on_abort(move || {
                slot.set(None);
            });
        }
        let outcome = slot.wait().await;
        match outcome {
            Some(Ok(run)) => Ok(Box::new(SharedRun(run))),
            Some(Err(e)) => Err(e),
            None => Err(SubagentError::cancelled()),
        }
    }

    /// Makes a published child resident under its live parent, and turns the
    /// admission's reservation into a committed name and a live slot.
    fn make_resident(
        &self,
        spec: &ActivationSpec,
        admission: &Admission,
        place: Placement<'_>,
        kind: Kind,
        settlement: &Rc<Settlement>,
        schema: Option<Rc<OutputSchema>>,
    ) -> Rc<Member> {
        let parent = &admission.parent;
        let mut ancestors = parent.ancestors.clone();
        ancestors.push(parent.id.clone());
        let mut state = MemberState::new(Life::new(schema), place.next_seq, place.trace);
        state.parent_link = Some(Rc::downgrade(parent));
        let member = Member {
            id: place.id.to_owned(),
            incarnation: self.token(),
            root_id: parent.root_id.clone(),
            parent_id: Some(parent.id.clone()),
            ancestors,
            depth: admission.depth,
            full_name: place.full_name.to_owned(),
            parent_name: Some(parent.full_name.clone()),
            path: place.path,
            label: spec.label.clone(),
            provider: spec.provider.clone(),
            cwd: admission.cwd.clone(),
            kind,
            settlement: Some(settlement.clone()),
            append_lock: Default::default(),
            agent_preset: admission.agent_preset.clone(),
            agent_options: admission.agent_options.clone(),
            runtime: Rc::downgrade(&self.0),
            slot: 0, // given by new_member
        };
        let member = self.new_member(member, state);
        self.0.state.borrow_mut().insert_member(member.clone());
        self.release_admission(admission, Some(place.id));
        member
    }

    pub(crate) fn run_info(&self, member: &Member, mode: Mode) -> RunInfo {
        RunInfo {
            provider: member.provider.clone(),
            id: member.id.clone(),
            parent_session_id: member.parent_id.clone().unwrap_or_default(),
            root_session_id: member.root_id.clone(),
            name: member.full_name.clone(),
            label: member.label.clone(),
            mode,
            budget: self.own_budget(member),
            tool_call: None,
            trace: member.read(|s| s.trace.clone()),
        }
    }

    /// `member`'s own budget in its open tree's ledger, where it has one.
    fn own_budget(&self, member: &Member) -> Option<super::BudgetState> {
        let st = self.0.state.borrow();
        st.trees.get(&member.root_id)?.ledger().budget_of(&member.id).map(super::BudgetState::from)
    }
}

type StartOutcome = Result<Rc<dyn Run>>;

/// An `Rc<dyn Run>` as a boxed run.
struct SharedRun(Rc<dyn Run>);

impl Run for SharedRun {
    fn id(&self) -> String {
        self.0.id()
    }
    fn result(&self) -> crate::core::exec::LocalBoxFuture<'static, Result<SubagentResult>> {
        self.0.result()
    }
    fn dispose(&self) -> crate::core::exec::LocalBoxFuture<'static, Result<()>> {
        self.0.dispose()
    }
}

/// Refuses a name a committed sibling entry holds (one that landed after admission).
fn unique_name(parent: &Member, admission: &Admission) -> Result<()> {
    if parent.read(|s| s.child_names.contains(admission.name.as_str())) {
        return Err(crate::err!(
            DuplicateName,
            "agent name {} is already taken among the children of {}",
            Quoted(admission.name.as_str()),
            Quoted(&parent.full_name)
        ));
    }
    Ok(())
}

/// The seq of a `turn/start` in `events` that no later `turn/end` closes.
fn open_turn(events: &[SessionEvent]) -> Option<u64> {
    let mut open = None;
    for e in events {
        match e.kind.as_str() {
            event::TURN_START => open = Some(e.seq),
            event::TURN_END => open = None,
            _ => {}
        }
    }
    open
}
