//! Model-facing tools for one live member: delegation (one tool per
//! provider), `send_message`, `interrupt_agent`, `list_agents` and the team
//! task tools. Each tool has a JSON Schema input and a `call` that never
//! fails: refusals come back as `is_error` results whose text states the rule,
//! so a model can correct itself. Tools address agents by full name (`lead`,
//! `reviewer/checker`) or Session id; names are resolved, then authorized by
//! the runtime with the caller's exact handle.

use crate::core::budget::Budget;
use crate::core::error::{ErrorCode, Result, SubagentError};
use crate::core::json::Value;
use crate::core::listing::Row;
use crate::core::name::{AgentRef, LEAD};
use crate::core::signal::Signal;
use crate::core::store::ReadQuery;
use crate::runtime::ports::Provider;
use crate::runtime::presets::Presets;
use crate::runtime::team::{self, TaskChange};
use crate::runtime::{ActivationSpec, Agent, Delivery, InterruptAuthority, LiveRow, Runtime, RuntimeEvent, ToolEnd};
use std::rc::Rc;

/// A tool as handed to a model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// What a tool call returns to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    pub content: String,
    pub is_error: bool,
    pub structured: Option<Value>,
}

impl ToolResult {
    fn ok(content: String, structured: Value) -> ToolResult {
        ToolResult { content, is_error: false, structured: Some(structured) }
    }

    fn error(content: String) -> ToolResult {
        ToolResult { content, is_error: true, structured: None }
    }
}

/// The tools of one member.
pub struct Toolset {
    runtime: Runtime,
    agent: Agent,
    specs: Vec<ToolSpec>,
    delegates: Vec<(String, Rc<dyn Provider>)>,
}

pub const SEND_MESSAGE: &str = "send_message";
pub const INTERRUPT_AGENT: &str = "interrupt_agent";
pub const LIST_AGENTS: &str = "list_agents";
pub const TASK_CREATE: &str = "task_create";
pub const TASK_LIST: &str = "task_list";
pub const TASK_UPDATE: &str = "task_update";

/// Members `list_agents` shows in its text for the whole tree before "and N more".
pub const MAX_TREE_LINES: usize = 100;

/// `INVALID_ARGUMENT` unless `name` can be one of a member's tools: a fixed
/// one, or a provider's delegation tool (`{provider}_agent`, the provider
/// perhaps registered later). `what` names the list (`presets.x.tools.only`).
pub fn check_tool_name(name: &str, what: &str) -> Result<()> {
    let fixed = [SEND_MESSAGE, INTERRUPT_AGENT, LIST_AGENTS, TASK_CREATE, TASK_LIST, TASK_UPDATE];
    if fixed.contains(&name) || (name.len() > "_agent".len() && name.ends_with("_agent")) {
        return Ok(());
    }
    Err(SubagentError::new(
        ErrorCode::InvalidArgument,
        format!(
            "{what} names {}, which is no tool: the tools are {}, and each provider's {{name}}_agent",
            crate::core::name::quote_truncated(name, 80),
            fixed.join(", ")
        ),
    ))
}

impl Runtime {
    /// The tools `agent` may use now. Delegation tools appear only while the
    /// member may still have children (its depth is below `maxDepth`), but
    /// for providers that manage their own depth.
    pub fn tools_for(&self, agent: &Agent) -> Result<Toolset> {
        self.require_live(agent, "agent")?;
        let mut specs = Vec::new();
        let mut delegates = Vec::new();
        let below_limit = agent.depth() < self.options().max_depth;
        for name in self.provider_names() {
            if let Some(provider) = self.get_provider(&name).filter(|p| below_limit || p.manages_depth()) {
                let mut spec = delegate_spec(&*provider);
                offer_presets(&mut spec, &self.0.options.presets);
                delegates.push((spec.name.clone(), provider));
                specs.push(spec);
            }
        }
        specs.extend([send_message_spec(), interrupt_spec(), list_agents_spec()]);
        specs.extend(task_specs());
        // A member's preset narrows its tools.
        if let Some(preset) = agent.0.agent_preset.as_ref().and_then(|p| self.0.options.presets.get(p)) {
            specs.retain(|s| preset.keeps(&s.name));
            delegates.retain(|(n, _)| preset.keeps(n));
        }
        Ok(Toolset { runtime: self.clone(), agent: agent.clone(), specs, delegates })
    }
}

/// Which of a member's tools a model gets: `only` these (when set), then
/// none of `except`. Every name must be one of the runtime's tools (a
/// delegation tool of a registered provider, or a fixed one), so a typo is
/// an error, not a tool silently missing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolChoice {
    pub only: Option<Vec<String>>,
    pub except: Vec<String>,
}

impl Toolset {
    /// These tools narrowed to `choice`; a tool left out is refused like an
    /// unknown one if called by name.
    pub fn select(mut self, choice: &ToolChoice) -> Result<Toolset> {
        let known: Vec<String> = self
            .runtime
            .provider_names()
            .iter()
            .filter_map(|n| self.runtime.get_provider(n))
            .map(|p| delegate_spec(&*p).name)
            .chain([SEND_MESSAGE, INTERRUPT_AGENT, LIST_AGENTS, TASK_CREATE, TASK_LIST, TASK_UPDATE].map(str::to_owned))
            .collect();
        for (field, names) in [("only", choice.only.as_deref().unwrap_or_default()), ("except", &choice.except[..])] {
            if let Some(unknown) = names.iter().find(|n| !known.contains(n)) {
                return Err(crate::err!(
                    InvalidArgument,
                    "{field} names {}, which is not one of the tools: {}",
                    quote(unknown),
                    known.join(", ")
                ));
            }
        }
        let keep = |name: &str| crate::runtime::presets::keeps(choice.only.as_deref(), &choice.except, name);
        self.specs.retain(|s| keep(&s.name));
        self.delegates.retain(|(n, _)| keep(n));
        Ok(self)
    }

    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// Runs one tool call. Never fails: refusals are `is_error` results. A
    /// call made during the agent's turn is stopped with that turn (as well
    /// as by `signal`): the runtime's operations run to their end unless
    /// signalled, so a turn stopped mid-call does not leave a start or a
    /// message of it going on.
    pub async fn call(&self, tool: &str, input: &Value, signal: &Signal) -> ToolResult {
        let call_id = self.runtime.token();
        self.emit_call(call_id, tool, Some(input), None);
        let (result, code) = self.run_call(call_id, tool, input, signal).await;
        if self.runtime.listened() {
            let child = (self.delegates.iter().any(|(n, _)| n == tool) && !result.is_error)
                .then_some(result.structured.as_ref())
                .flatten()
                .and_then(|s| Some((s.get("subagentId")?.as_str()?.to_owned(), s.get("name")?.as_str()?.to_owned())));
            let end = ToolEnd { is_error: result.is_error, code, content: result.content.clone(), child };
            self.emit_call(call_id, tool, None, Some(end));
        }
        result
    }

    /// A `subagent/tool` event of this member's call (built only for listeners: it copies the input).
    fn emit_call(&self, call_id: u64, tool: &str, input: Option<&Value>, end: Option<ToolEnd>) {
        if !self.runtime.listened() {
            return;
        }
        let member = &self.agent.0;
        self.runtime.emit(RuntimeEvent::Tool {
            root_id: member.root_id.clone(),
            session_id: member.id.clone(),
            name: member.full_name.clone(),
            call_id,
            tool: tool.to_owned(),
            input: input.cloned(),
            end,
        });
    }

    /// The call's result, and a refusal's code (for traces that must not repeat the model's text).
    async fn run_call(
        &self,
        call_id: u64,
        tool: &str,
        input: &Value,
        signal: &Signal,
    ) -> (ToolResult, Option<ErrorCode>) {
        let refused = |e: SubagentError| (ToolResult::error(explain(&e)), Some(e.code));
        if !self.specs.iter().any(|s| s.name == tool) {
            return refused(crate::err!(InvalidArgument, "there is no tool named {}", quote(tool)));
        }
        if input.as_object().is_none() {
            return refused(crate::err!(
                InvalidArgument,
                "{tool} takes a JSON object of arguments, not {}",
                input.kind()
            ));
        }
        let linked;
        let signal = match self.runtime.turn_signal(&self.agent) {
            Some(turn) if !turn.same(signal) => {
                linked = signal.child();
                let weak = linked.downgrade();
                turn.on_abort(move || {
                    if let Some(s) = weak.upgrade() {
                        s.abort();
                    }
                });
                &linked
            }
            _ => signal,
        };
        let outcome = match tool {
            SEND_MESSAGE => self.send_message(input, signal).await,
            INTERRUPT_AGENT => self.interrupt(input, signal).await,
            LIST_AGENTS => self.list_agents(input, signal).await,
            TASK_CREATE => self.task_create(input, signal).await,
            TASK_LIST => self.task_list(input, signal).await,
            TASK_UPDATE => self.task_update(input, signal).await,
            other => match self.delegates.iter().find(|(n, _)| n == other) {
                Some((_, provider)) => self.delegate(provider.clone(), call_id, input, signal).await,
                None => Err(crate::err!(InvalidArgument, "there is no tool named {}", quote(other))),
            },
        };
        match outcome {
            Ok(result) => (result, None),
            Err(e) => refused(e),
        }
    }

    async fn delegate(
        &self,
        provider: Rc<dyn Provider>,
        call_id: u64,
        input: &Value,
        signal: &Signal,
    ) -> Result<ToolResult> {
        let label = required_text(input, "description")?;
        let prompt = required_text(input, "prompt")?;
        let mut spec = ActivationSpec::new(&provider.name(), &self.agent, &label, &prompt);
        spec.name = optional_text(input, "name")?;
        spec.cwd = optional_text(input, "cwd")?;
        spec.signal = signal.clone();
        spec.delivery = Delivery::Parent;
        spec.tool_call = Some(call_id);
        if let Some(model) = optional_text(input, "model")? {
            spec.agent_options = Some(Value::object([("model", Some(Value::from(model)))]));
        }
        spec.agent_preset = optional_text(input, "preset")?;
        spec.budget = match input.get("budget") {
            None | Some(Value::Null) => None,
            Some(b) => Some(Budget::from_value(b, "budget")?),
        };
        let activation = self.runtime.start_activation(spec).await?;
        let follow_up = if activation.is_external() {
            "It cannot take messages; its result reaches you when it finishes."
        } else {
            "Its final report reaches you when it finishes; send it more with send_message."
        };
        let budget = activation
            .budget
            .map_or_else(String::new, |b| format!(" Its budget (for it and every agent it starts): {}.", b.describe()));
        Ok(ToolResult::ok(
            format!("Started agent {} (Session id {}).{budget} {follow_up}", activation.name, activation.child_id),
            Value::object([
                ("kind", Some(Value::from("activation"))),
                ("subagentId", Some(Value::from(activation.child_id.as_str()))),
                ("name", Some(Value::from(activation.name.as_str()))),
                ("budget", activation.budget.as_ref().map(Budget::to_value)),
            ]),
        ))
    }

    async fn send_message(&self, input: &Value, signal: &Signal) -> Result<ToolResult> {
        let agent = required_text(input, "agent")?;
        let message = required_text(input, "message")?;
        let target = self.resolve(&agent, signal).await?;
        let id = self.runtime.send_message(&self.agent, &target.id, Value::from(message), signal).await?;
        Ok(ToolResult::ok(
            format!("Message delivered to {}.", target.name),
            Value::object([
                ("messageId", Some(Value::from(id))),
                ("agent", Some(Value::from(target.name.as_str()))),
                ("subagentId", Some(Value::from(target.id.as_str()))),
            ]),
        ))
    }

    async fn interrupt(&self, input: &Value, signal: &Signal) -> Result<ToolResult> {
        let agent = required_text(input, "agent")?;
        let target = self.resolve(&agent, signal).await?;
        // One refusal for everything outside the caller's tree, live, cold or absent:
        // whether another tree's session is running is not the caller's to learn.
        if !target.in_tree {
            return Err(crate::core::listing::not_a_member(&agent));
        }
        // Authority before state: a non-ancestor learns nothing of whether the target runs.
        if target.id == self.agent.session_id() {
            return Err(super::deliver::cannot_interrupt_itself(&self.agent));
        }
        let named = |n: &str| !matches!(AgentRef::parse(n), AgentRef::Session(_));
        if named(&target.name) && named(self.agent.name()) && !super::deliver::is_below(self.agent.name(), &target.name)
        {
            return Err(super::deliver::not_an_ancestor(&self.agent, &target.name));
        }
        let receipt = self.runtime.interrupt(&target.id, InterruptAuthority::Ancestor(&self.agent))?;
        let content = if receipt.signalled {
            format!("Interrupted {}: its current turn was stopped. Messages it had not read wait until it is messaged again.", target.name)
        } else {
            format!("{} was not running, so nothing was stopped.", target.name)
        };
        Ok(ToolResult::ok(
            content,
            Value::object([
                ("agent", Some(Value::from(target.name.as_str()))),
                ("subagentId", Some(Value::from(target.id.as_str()))),
                ("stopped", Some(Value::Bool(receipt.signalled))),
            ]),
        ))
    }

    async fn list_agents(&self, input: &Value, signal: &Signal) -> Result<ToolResult> {
        let scope = optional_text(input, "scope")?.unwrap_or_else(|| "tree".into());
        let descendants = match scope.as_str() {
            "tree" => return self.list_whole_tree(signal).await,
            "children" => false,
            "descendants" => true,
            other => {
                return Err(crate::err!(
                    InvalidArgument,
                    "scope {} must be \"tree\", \"children\" or \"descendants\"",
                    quote(other)
                ))
            }
        };
        let rows = self.runtime.list_descendants(self.agent.session_id(), signal).await?;
        let mut lines = Vec::new();
        let mut out = Vec::new();
        for entry in rows.iter().filter(addressable).filter(|r| descendants || r.row.depth() == 1) {
            let (name, parent) = (self.full_name(&entry.row), self.parent_name(&entry.row, &rows));
            let Described { status, description, diagnostic, tokens, detail } = describe(entry);
            let indent = if descendants { "  ".repeat(entry.row.depth() as usize - 1) } else { String::new() };
            lines.push(format!("{indent}- {name} ({detail})"));
            let mut row = vec![
                ("name", Some(Value::from(name.as_str()))),
                ("status", Some(Value::from(status))),
                ("description", Some(Value::from(description))),
                ("sessionId", Some(Value::from(entry.row.id()))),
                ("tokens", Some(Value::from(tokens))),
            ];
            if descendants {
                row.push(("parent", Some(Value::from(parent))));
                row.push(("depth", Some(Value::from(entry.row.depth() as u64))));
            }
            row.push(("preset", entry.live.turns.preset.as_deref().map(Value::from)));
            row.push(("budget", entry.live.budget.as_ref().map(crate::runtime::BudgetState::to_value)));
            row.push(("diagnostic", diagnostic.map(Value::from)));
            out.push(Value::object(row));
        }
        let whose = match (descendants, out.len()) {
            (true, 1) => "descendant",
            (true, _) => "descendants",
            (false, 1) => "child",
            (false, _) => "children",
        };
        let header = match out.len() {
            0 => format!("{} has no {whose}.", self.agent.name()),
            n => format!(
                "{n} {whose} of {} (running = working now, inactive = idle or finished; neither says whether its task is done):",
                self.agent.name()
            ),
        };
        let content = std::iter::once(header).chain(lines).collect::<Vec<_>>().join("\n");
        Ok(ToolResult::ok(content, Value::object([("agents", Some(Value::Array(out)))])))
    }

    /// `list_agents` over the whole tree (seed 003: "list_agents exposes the
    /// root and reachable continuable descendants with running or inactive
    /// activity"): every member the caller may address, the caller marked, in
    /// pre-order; the text stops after [`MAX_TREE_LINES`] members with "and N
    /// more" (the structured rows hold them all).
    async fn list_whole_tree(&self, signal: &Signal) -> Result<ToolResult> {
        let root_id = self.agent.root_id().to_owned();
        let (root, rows) = self.runtime.list_tree(&root_id, signal).await?;
        let me = self.agent.session_id();
        let you = |id: &str| if id == me { " <- you" } else { "" };
        let (root_status, root_tokens) = (activity(&root), root.usage.subtree.usage.tokens());
        let mut lines = vec![format!("- {LEAD} (root; {root_status}{}){}", spent(&root), you(&root_id))];
        let mut out = vec![Value::object([
            ("name", Some(Value::from(LEAD))),
            ("status", Some(Value::from(root_status))),
            ("sessionId", Some(Value::from(root_id.as_str()))),
            ("depth", Some(Value::from(0u64))),
            ("tokens", Some(Value::from(root_tokens))),
            ("you", Some(Value::Bool(root_id == me))),
        ])];
        let names: crate::core::hash::HashMap<&str, String> =
            rows.iter().map(|r| (r.row.id(), tree_name(&r.row))).collect();
        let mut more = 0usize;
        for entry in rows.iter().filter(addressable) {
            let name = tree_name(&entry.row);
            let parent = if entry.row.parent_id() == root_id {
                LEAD.to_owned()
            } else {
                names.get(entry.row.parent_id()).cloned().unwrap_or_else(|| entry.row.parent_id().to_owned())
            };
            let Described { status, description, diagnostic, tokens, detail } = describe(entry);
            if lines.len() <= MAX_TREE_LINES {
                let indent = "  ".repeat(entry.row.depth() as usize);
                lines.push(format!("{indent}- {name} ({detail}){}", you(entry.row.id())));
            } else {
                more += 1;
            }
            out.push(Value::object([
                ("name", Some(Value::from(name.as_str()))),
                ("status", Some(Value::from(status))),
                ("description", Some(Value::from(description))),
                ("sessionId", Some(Value::from(entry.row.id()))),
                ("parent", Some(Value::from(parent))),
                ("depth", Some(Value::from(entry.row.depth() as u64))),
                ("tokens", Some(Value::from(tokens))),
                ("you", Some(Value::Bool(entry.row.id() == me))),
                ("preset", entry.live.turns.preset.as_deref().map(Value::from)),
                ("budget", entry.live.budget.as_ref().map(crate::runtime::BudgetState::to_value)),
                ("diagnostic", diagnostic.map(Value::from)),
            ]));
        }
        if more > 0 {
            lines.push(format!("... and {more} more"));
        }
        let header = format!(
            "The tree: {} members (you are {}; message any of them by full name; running = working now, inactive = idle or finished; neither says whether its task is done):",
            out.len(),
            self.agent.name()
        );
        let content = std::iter::once(header).chain(lines).collect::<Vec<_>>().join("\n");
        Ok(ToolResult::ok(content, Value::object([("agents", Some(Value::Array(out)))])))
    }

    async fn task_create(&self, input: &Value, signal: &Signal) -> Result<ToolResult> {
        let title = required_text(input, "title")?;
        let description = optional_text(input, "description")?;
        let owner = match optional_text(input, "owner")? {
            Some(owner) => Some(self.resolve_member(&owner, signal).await?),
            None => None,
        };
        let root = self.runtime.root_of(&self.agent)?;
        let change = TaskChange {
            create: true,
            title: Some(title),
            description,
            status: Some("open".into()),
            owner_id: Some(owner.as_ref().map(|o| o.id.clone())),
            by: self.agent.session_id().to_owned(),
            at: self.runtime.now(),
            ..TaskChange::default()
        };
        let seq = self.runtime.append_to(&root, team::TASK_EVENT, change.to_payload()).await?;
        let tasks = self.board(signal).await?;
        let task = tasks.iter().find(|t| t.created_seq == seq).ok_or_else(|| {
            crate::err!(
                PersistenceUnavailable,
                "the task was written, but the store returned a board without it; call task_list to see it"
            )
        })?;
        let task_id = task.id.clone();
        self.show_task(&tasks, &task_id, "Created", signal).await
    }

    async fn task_list(&self, input: &Value, signal: &Signal) -> Result<ToolResult> {
        let owner = match optional_text(input, "owner")? {
            Some(owner) => Some(self.resolve_member(&owner, signal).await?.id),
            None => None,
        };
        let status = optional_text(input, "status")?;
        if let Some(s) = &status {
            team::check_status(s)?;
        }
        let tasks = self.board(signal).await?;
        let names = self.names(signal).await?;
        let shown: Vec<&team::Task> = tasks
            .iter()
            .filter(|t| owner.is_none() || t.owner_id == owner)
            .filter(|t| status.as_ref().is_none_or(|s| &t.status == s))
            .collect();
        let mut lines = vec![match shown.len() {
            0 => "No tasks match.".to_owned(),
            n => format!("{n} task(s):"),
        }];
        lines.extend(shown.iter().map(|t| task_line(t, &names)));
        let rows = shown.iter().map(|t| task_value(t, &names)).collect();
        Ok(ToolResult::ok(lines.join("\n"), Value::object([("tasks", Some(Value::Array(rows)))])))
    }

    async fn task_update(&self, input: &Value, signal: &Signal) -> Result<ToolResult> {
        let task_id = required_text(input, "task")?;
        let status = optional_text(input, "status")?;
        if let Some(s) = &status {
            team::check_status(s)?;
        }
        let owner = match optional_text(input, "owner")? {
            Some(owner) => Some(Some(self.resolve_member(&owner, signal).await?.id)),
            None => None,
        };
        let tasks = self.board(signal).await?;
        if !tasks.iter().any(|t| t.id == task_id) {
            let known: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
            return Err(crate::err!(
                InvalidArgument,
                "there is no task {}; known tasks: {}",
                quote(&task_id),
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            ));
        }
        let change = TaskChange {
            task_id: task_id.clone(),
            status,
            owner_id: owner,
            result: optional_text(input, "result")?,
            title: optional_text(input, "title")?,
            by: self.agent.session_id().to_owned(),
            at: self.runtime.now(),
            ..TaskChange::default()
        };
        let root = self.runtime.root_of(&self.agent)?;
        self.runtime.append_to(&root, team::TASK_EVENT, change.to_payload()).await?;
        let tasks = self.board(signal).await?;
        self.show_task(&tasks, &task_id, "Updated", signal).await
    }

    /// One task of a board folded after the change, with its owner's name.
    async fn show_task(&self, tasks: &[team::Task], task_id: &str, verb: &str, signal: &Signal) -> Result<ToolResult> {
        let names = self.names(signal).await?;
        let task = tasks
            .iter()
            .find(|t| t.id == task_id)
            .ok_or_else(|| crate::err!(InvalidArgument, "task {} vanished", quote(task_id)))?;
        Ok(ToolResult::ok(
            format!("{verb} {}", task_line(task, &names).trim_start_matches("- ")),
            task_value(task, &names),
        ))
    }

    async fn board(&self, signal: &Signal) -> Result<Vec<team::Task>> {
        let root = self.agent.root_id().to_owned();
        let query = ReadQuery::types(&[team::TASK_EVENT], signal);
        let events = signal.guard(self.runtime.store().read(&root, &query)).await?.unwrap_or_default();
        Ok(team::fold(&events))
    }

    /// Every member's id and full name, for showing owners.
    async fn names(&self, signal: &Signal) -> Result<Vec<(String, String)>> {
        let root = self.agent.root_id();
        let rows = self.runtime.list_descendants(root, signal).await?;
        let mut names = vec![(root.to_owned(), LEAD.to_owned())];
        names.extend(rows.iter().filter_map(|r| match &r.row {
            Row::Child(c) => Some((c.id.clone(), c.path_string().unwrap_or_else(|| c.id.clone()))),
            Row::Diagnostic(_) => None,
        }));
        Ok(names)
    }

    /// Resolves a reference to a member of the caller's tree (`lead` included).
    async fn resolve_member(&self, text: &str, signal: &Signal) -> Result<Resolved> {
        let target = self.resolve(text, signal).await?;
        if target.in_tree {
            Ok(target)
        } else {
            Err(crate::core::listing::not_a_member(text))
        }
    }

    /// A reference as a Session id, with its full name and whether it is a
    /// member of the caller's tree, reading what a cold resume of it would
    /// read (the logs on its way up), not the whole tree.
    async fn resolve(&self, text: &str, signal: &Signal) -> Result<Resolved> {
        let root = self.agent.root_id().to_owned();
        let id = self.runtime.resolve_name(&self.agent, text, signal).await?;
        if id == root {
            return Ok(Resolved { id, name: LEAD.to_owned(), in_tree: true });
        }
        let name = self.runtime.member_name(&root, &id, signal).await?;
        Ok(Resolved { in_tree: name.is_some(), name: name.unwrap_or_else(|| id.clone()), id })
    }

    fn full_name(&self, row: &Row) -> String {
        let path = match row {
            Row::Child(c) => c.path_string(),
            Row::Diagnostic(_) => None,
        };
        match (self.agent.path(), path) {
            (Some(""), Some(rel)) => rel,
            (Some(base), Some(rel)) => format!("{base}/{rel}"),
            _ => row.id().to_owned(),
        }
    }

    fn parent_name(&self, row: &Row, rows: &[LiveRow]) -> String {
        if row.parent_id() == self.agent.session_id() {
            return self.agent.name().to_owned();
        }
        rows.iter()
            .find(|r| r.row.id() == row.parent_id())
            .map_or_else(|| row.parent_id().to_owned(), |r| self.full_name(&r.row))
    }
}

struct Resolved {
    id: String,
    name: String,
    in_tree: bool,
}

/// Listed by `list_agents`: the root's reachable continuable members
/// (seed 003). External runs cannot be messaged; diagnostics still show.
fn addressable(r: &&LiveRow) -> bool {
    match &r.row {
        Row::Child(c) => c.mode != crate::core::catalog::Mode::External,
        Row::Diagnostic(_) => true,
    }
}

/// `running` or `inactive`: neither says whether a task is done.
fn activity(live: &crate::runtime::Live) -> &'static str {
    if live.running {
        "running"
    } else {
        "inactive"
    }
}

/// `; N tokens` its whole subtree spent (input plus output), when it spent any.
fn spent(live: &crate::runtime::Live) -> String {
    match live.usage.subtree.usage.tokens() {
        0 => String::new(),
        n => format!("; {n} tokens{}", if live.usage.subtree.complete { "" } else { " or more" }),
    }
}

/// What `list_agents` says of one member, in a line and in its row.
struct Described<'a> {
    status: &'static str,
    description: String,
    diagnostic: Option<&'a str>,
    /// Its subtree's input plus output tokens.
    tokens: u64,
    /// The line's parenthesis: status, label, preset, tokens, budget left.
    detail: String,
}

fn describe(entry: &LiveRow) -> Described<'_> {
    let live = &entry.live;
    let (status, description, diagnostic) = match &entry.row {
        Row::Child(c) => (activity(live), c.label.clone().unwrap_or_default(), None),
        Row::Diagnostic(d) => ("unavailable", String::new(), Some(d.reason.as_str())),
    };
    let left = live.budget.map_or_else(String::new, |b| format!("; budget left: {}", b.remaining.describe()));
    let preset = live.turns.preset.as_deref().map_or_else(String::new, |p| format!("; preset {p}"));
    let spent = spent(live);
    let detail = match diagnostic {
        Some(reason) => format!("cannot be shown ({reason})"),
        None if description.is_empty() => format!("{status}{preset}{spent}{left}"),
        None => format!("{status}: {description}{preset}{spent}{left}"),
    };
    Described { status, description, diagnostic, tokens: live.usage.subtree.usage.tokens(), detail }
}

/// A row's full name from the root (its Session id below an unnamed creator, or for a diagnostic).
fn tree_name(row: &Row) -> String {
    match row {
        Row::Child(c) => c.path_string().unwrap_or_else(|| c.id.clone()),
        Row::Diagnostic(d) => d.id.clone(),
    }
}

/// Model input quoted in a refusal, bounded so a huge input never comes back whole.
fn quote(text: &str) -> String {
    crate::core::name::quote_truncated(text, 80)
}

/// A sentence for the model: the error, plus how to fix naming mistakes.
fn explain(e: &SubagentError) -> String {
    match e.code {
        ErrorCode::InvalidName => {
            format!("{}. Pick another name, or omit name to get the first free agent-N.", e.message)
        }
        ErrorCode::DuplicateName => {
            format!("{}. Pick another name, or omit name to get the first free agent-N.", e.message)
        }
        ErrorCode::BudgetExhausted => {
            format!("{}. Finish with what you have: only the host can raise a budget.", e.message)
        }
        _ => e.message.clone(),
    }
}

fn required_text(input: &Value, key: &str) -> Result<String> {
    match input.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(crate::err!(InvalidArgument, "{key} must not be empty")),
        Some(other) => Err(crate::err!(InvalidArgument, "{key} must be a string, not {}", other.kind())),
        None => Err(crate::err!(InvalidArgument, "{key} is required")),
    }
}

fn optional_text(input: &Value, key: &str) -> Result<Option<String>> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(crate::err!(InvalidArgument, "{key} must be a string, not {}", other.kind())),
    }
}

fn owner_name(owner: &Option<String>, names: &[(String, String)]) -> Option<String> {
    owner.as_ref().map(|id| names.iter().find(|(i, _)| i == id).map_or_else(|| id.clone(), |(_, n)| n.clone()))
}

fn task_line(t: &team::Task, names: &[(String, String)]) -> String {
    let owner = owner_name(&t.owner_id, names).map_or_else(|| "unassigned".to_owned(), |n| format!("owner {n}"));
    let result = t.result.as_ref().map_or_else(String::new, |r| format!(" — result: {r}"));
    format!("- {} [{}] {} ({owner}){result}", t.id, t.status, t.title)
}

fn task_value(t: &team::Task, names: &[(String, String)]) -> Value {
    Value::object([
        ("id", Some(Value::from(t.id.as_str()))),
        ("title", Some(Value::from(t.title.as_str()))),
        ("status", Some(Value::from(t.status.as_str()))),
        ("owner", Some(owner_name(&t.owner_id, names).map_or(Value::Null, Value::from))),
        ("description", t.description.as_deref().map(Value::from)),
        ("result", t.result.as_deref().map(Value::from)),
    ])
}

// ---- schemas ---------------------------------------------------------------------

fn prop(kind: &str, description: &str) -> Option<Value> {
    Some(Value::object([("type", Some(Value::from(kind))), ("description", Some(Value::from(description)))]))
}

fn object_schema(properties: Vec<(&str, Option<Value>)>, required: &[&str]) -> Value {
    Value::object([
        ("type", Some(Value::from("object"))),
        ("properties", Some(Value::object(properties))),
        ("required", Some(Value::Array(required.iter().map(|r| Value::from(*r)).collect()))),
        ("additionalProperties", Some(Value::Bool(false))),
    ])
}

const AGENT_REF: &str =
    "The agent's full name, such as \"reviewer/checker\" (\"lead\" is the root), or its Session id.";

/// A delegation tool's `preset` input, listing the runtime's presets (a
/// model cannot guess their ids): each with its description, as an enum.
fn offer_presets(spec: &mut ToolSpec, presets: &Presets) {
    if presets.is_empty() {
        return;
    }
    let Value::Object(fields) = &mut spec.input_schema else { return };
    let Some((_, Value::Object(props))) = fields.iter_mut().find(|(k, _)| k == "properties") else { return };
    let Some((_, preset)) = props.iter_mut().find(|(k, _)| k == "preset") else { return };
    let listed: Vec<String> = presets
        .iter()
        .map(|(id, p)| match &p.description {
            Some(d) => format!("{id} ({d})"),
            None => id.clone(),
        })
        .collect();
    *preset = Value::object([
        ("type", Some(Value::from("string"))),
        ("enum", Some(Value::Array(presets.keys().map(|id| Value::from(id.as_str())).collect()))),
        (
            "description",
            Some(Value::from(format!(
                "Optional preset for the new agent: {}. Omit it to give the agent your own.",
                listed.join("; ")
            ))),
        ),
    ]);
}

/// The delegation tool of one provider: truthful about context and follow-ups.
pub fn delegate_spec(provider: &dyn Provider) -> ToolSpec {
    let pname = provider.name();
    let tool: String = match pname.as_str() {
        crate::runtime::providers::SPAWN => "spawn_agent".into(),
        crate::runtime::providers::FORK => "fork_agent".into(),
        other => {
            let clean: String =
                other.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).take(40).collect();
            format!("{clean}_agent")
        }
    };
    let context = if provider.inherits_parent_context() {
        "The new agent starts with a copy of this conversation so far (a fork), so the prompt can refer to it."
    } else {
        "The new agent starts with a fresh context and does not see this conversation: put everything it needs in the prompt."
    };
    let follow_up = if provider.prepares_continuable() {
        "It runs in parallel; its final report reaches you when it finishes, and you can message it later with send_message.".to_owned()
    } else {
        format!("It runs on {pname}, an external runner; its result reaches you when it finishes, and it cannot be messaged later.")
    };
    let depth = if provider.manages_depth() {
        " It manages its own depth: the tree's depth limit does not apply to it."
    } else {
        ""
    };
    let description = format!(
        "Start a named subagent to work on a task in parallel. {context} {follow_up}{depth} Returns {{kind, subagentId, name}}."
    );
    let caps = provider.capabilities();
    let mut props = vec![
        ("description", prop("string", "A short label for the task (3-8 words), shown in agent listings.")),
        ("prompt", prop("string", "The task, with everything the agent needs to do it.")),
        (
            "name",
            Some(Value::object([
                ("type", Some(Value::from("string"))),
                ("pattern", Some(Value::from("^[a-z][a-z0-9-]{0,31}$"))),
                (
                    "description",
                    Some(Value::from(
                        "Optional name, unique among your children: 1-32 lower-case letters, digits or hyphens starting with a letter, not \"lead\". Omit it to get the first free agent-N.",
                    )),
                ),
            ])),
        ),
        ("cwd", prop("string", "Optional working directory; a relative path resolves against yours.")),
    ];
    if caps.agent_options {
        props.push(("model", prop("string", "Optional model for the new agent.")));
    }
    if caps.agent_preset && !provider.inherits_parent_context() {
        props.push(("preset", prop("string", "Optional preset id for the new agent.")));
    }
    if provider.prepares_continuable() {
        let limit = |what: &str| {
            Some(Value::object([
                ("type", Some(Value::from("integer"))),
                ("minimum", Some(Value::from(1u64))),
                ("description", Some(Value::from(what))),
            ]))
        };
        props.push((
            "budget",
            Some(Value::object([
                ("type", Some(Value::from("object"))),
                (
                    "description",
                    Some(Value::from(
                        "Optional limits on what the new agent and every agent it starts may spend together; lowered to what your own budget has left.",
                    )),
                ),
                (
                    "properties",
                    Some(Value::object([
                        ("tokens", limit("Input plus output tokens.")),
                        ("turns", limit("Model turns.")),
                        ("spawns", limit("Agents started below it.")),
                        ("cost", limit("Cost, in the host's unit.")),
                    ])),
                ),
                ("additionalProperties", Some(Value::Bool(false))),
            ])),
        ));
    }
    ToolSpec { name: tool, description, input_schema: object_schema(props, &["description", "prompt"]) }
}

fn send_message_spec() -> ToolSpec {
    ToolSpec {
        name: SEND_MESSAGE.into(),
        description: "Send a message to another agent in your tree, by full name. A running agent sees it at its next step; an idle or finished one wakes up to handle it. External runs cannot be messaged.".into(),
        input_schema: object_schema(vec![("agent", prop("string", AGENT_REF)), ("message", prop("string", "What to tell the agent."))], &["agent", "message"]),
    }
}

fn interrupt_spec() -> ToolSpec {
    ToolSpec {
        name: INTERRUPT_AGENT.into(),
        description: "Stop the current work of one of your descendants. Its queued messages wait until someone messages it again; its own children keep running.".into(),
        input_schema: object_schema(vec![("agent", prop("string", AGENT_REF))], &["agent"]),
    }
}

fn list_agents_spec() -> ToolSpec {
    ToolSpec {
        name: LIST_AGENTS.into(),
        description: "List the agents of your tree you may message: lead and every member below it, you marked (or only your children, or your descendants), with their full names, status (running or inactive: it does not say whether a task is done) and task descriptions.".into(),
        input_schema: object_schema(
            vec![(
                "scope",
                Some(Value::object([
                    ("type", Some(Value::from("string"))),
                    (
                        "enum",
                        Some(Value::Array(vec![Value::from("tree"), Value::from("children"), Value::from("descendants")])),
                    ),
                    ("description", Some(Value::from("tree (default: the whole tree), children or descendants"))),
                ])),
            )],
            &[],
        ),
    }
}

fn task_specs() -> Vec<ToolSpec> {
    let status = Some(Value::object([
        ("type", Some(Value::from("string"))),
        ("enum", Some(Value::Array(team::STATUSES.iter().map(|s| Value::from(*s)).collect()))),
    ]));
    let owner = prop("string", "The owner's full name (\"lead\" for the root).");
    vec![
        ToolSpec {
            name: TASK_CREATE.into(),
            description: "Add a task to your tree's shared task board, optionally assigned to an agent by full name.".into(),
            input_schema: object_schema(
                vec![("title", prop("string", "The task.")), ("description", prop("string", "Details.")), ("owner", owner.clone())],
                &["title"],
            ),
        },
        ToolSpec {
            name: TASK_LIST.into(),
            description: "List the shared task board, optionally only one owner's tasks or one status.".into(),
            input_schema: object_schema(vec![("owner", owner.clone()), ("status", status.clone())], &[]),
        },
        ToolSpec {
            name: TASK_UPDATE.into(),
            description: "Update a task: change its status (completed, with a result), assign it to an agent by full name, or retitle it.".into(),
            input_schema: object_schema(
                vec![
                    ("task", prop("string", "The task id, such as task-1.")),
                    ("status", status),
                    ("owner", owner),
                    ("result", prop("string", "What came of it.")),
                    ("title", prop("string", "A new title.")),
                ],
                &["task"],
            ),
        },
    ]
}
