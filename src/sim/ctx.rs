//! What every simulated part shares for one seed: the PRNG, fault rates,
//! counters, the bookkeeping the invariants need, and a fault-free view of
//! the store (the model). Nothing here holds a runtime, so no cycle runs
//! through the host or the providers.

use super::rng::Rng;
use crate::core::error::Result;
use crate::core::exec::{yield_now, Deferred};
use crate::core::json::Value;
use crate::core::listing::{self, ChildRow, Row};
use crate::core::result::SubagentResult;
use crate::core::signal::Signal;
use crate::core::store::{MemoryStore, ReadQuery};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// Fault probabilities (per call) for one seed.
#[derive(Clone, Debug)]
pub struct Rates {
    pub store_delay: f64,
    pub store_fail: f64,
    pub store_hang: f64,
    pub prep_delay: f64,
    pub prep_fail: f64,
    pub prep_hang: f64,
    pub ext_start_fail: f64,
    pub ext_start_hang: f64,
    pub ext_run_error: f64,
    pub ext_dispose_fail: f64,
    pub host_error: f64,
    pub host_release_fail: f64,
    /// Chance per turn step that the host's "model" calls a tool.
    pub tool_call: f64,
}

impl Rates {
    /// The base rates scaled by `k` (tool calls are behaviour, not faults, and stay).
    pub fn scaled(k: f64) -> Rates {
        Rates {
            store_delay: (0.15 * k).min(0.9),
            store_fail: 0.03 * k,
            store_hang: 0.01 * k,
            prep_delay: (0.3 * k).min(0.9),
            prep_fail: 0.08 * k,
            prep_hang: 0.03 * k,
            ext_start_fail: 0.08 * k,
            ext_start_hang: 0.03 * k,
            ext_run_error: 0.06 * k,
            ext_dispose_fail: 0.08 * k,
            host_error: 0.04 * k,
            host_release_fail: 0.03 * k,
            tool_call: 0.25,
        }
    }
}

/// Named counters (operations run, faults injected), in name order.
#[derive(Default, Debug)]
pub struct Counters(RefCell<BTreeMap<&'static str, u64>>);

impl Counters {
    pub fn bump(&self, key: &'static str) {
        *self.0.borrow_mut().entry(key).or_default() += 1;
    }

    pub fn snapshot(&self) -> BTreeMap<&'static str, u64> {
        self.0.borrow().clone()
    }
}

/// One message an API call reported as accepted.
#[derive(Clone, Debug)]
pub struct Accepted {
    pub target: String,
    pub id: String,
    pub via: &'static str,
}

/// One team task a `task_create` call reported as created.
#[derive(Clone, Debug)]
pub struct CreatedTask {
    pub root: String,
    pub id: String,
    pub title: String,
}

/// Start/end pairing of `subagent/start` and `subagent/end` in one runtime.
#[derive(Default, Debug)]
pub struct Lifecycle {
    /// Per child id: how many starts and ends this runtime emitted.
    pub counts: BTreeMap<String, (u32, u32)>,
    /// `(id, k)` → the k-th end's stop reason and error.
    pub ends: BTreeMap<(String, u32), (crate::core::result::StopReason, Option<String>)>,
}

pub struct Ctx {
    pub seed: u64,
    pub rng: Rng,
    pub rates: Rates,
    pub verbose: bool,
    pub ops: Counters,
    pub faults: Counters,
    pub violations: RefCell<Vec<String>>,
    /// The store under the faults: the truth the model reads.
    pub inner: Rc<MemoryStore>,
    /// No faults at all (checks through the runtime).
    pub quiet: Cell<bool>,
    /// Whether calls may hang (off once the workload stops).
    pub hangs: Cell<bool>,
    heal: RefCell<Deferred<()>>,
    pub epoch: Cell<u32>,
    pub roots: Vec<String>,
    pub max_depth: u32,
    pub accepted: RefCell<Vec<Accepted>>,
    /// Every task `task_create` reported, across runtimes.
    pub tasks: RefCell<Vec<CreatedTask>>,
    /// Per child id, the settlement notices its creator's log must hold
    /// (one per end while the creator was online), across runtimes.
    pub notices: RefCell<BTreeMap<String, u32>>,
    /// Children started with `delivery: 'caller'` (their results are not notices).
    pub caller_delivery: RefCell<BTreeSet<String>>,
    /// Members with something to report in their current residency: a turn
    /// ended (or a lost one was recorded), an external run, or a dispose.
    pub reportable: RefCell<BTreeSet<String>>,
    /// Per session, the message ids the host was handed (input or steered).
    pub seen: RefCell<BTreeMap<String, BTreeSet<String>>>,
    /// Per session, the full name and creator name its turns carried.
    pub names: RefCell<BTreeMap<String, (String, Option<String>)>>,
    pub lifecycle: RefCell<Lifecycle>,
    /// Members interrupted in this runtime (an interrupt parks a member: it may stay idle).
    pub interrupted: RefCell<BTreeSet<String>>,
    /// External runs started in this runtime: (id, times disposed).
    pub runs: RefCell<Vec<Rc<RunState>>>,
    /// Sessions whose first batch the store tore (a strict prefix landed,
    /// the call failed), with the length that landed, across runtimes.
    pub torn: RefCell<BTreeMap<String, u64>>,
    /// Per root, the budget it is opened with (decided at its first open).
    pub root_budgets: RefCell<BTreeMap<String, Option<crate::core::budget::Budget>>>,
    /// Roots whose trees have (or may have) a budget: only there may a
    /// message or start be refused `BUDGET_EXHAUSTED`.
    pub budgeted: RefCell<BTreeSet<String>>,
    /// Per root, the tokens and cost its hosts reported past their allowances.
    pub excess: RefCell<BTreeMap<String, (u64, u64)>>,
}

impl Ctx {
    pub fn new(seed: u64, rates: Rates, roots: usize, max_depth: u32, verbose: bool) -> Ctx {
        Ctx {
            seed,
            rng: Rng::new(seed),
            rates,
            verbose,
            ops: Counters::default(),
            faults: Counters::default(),
            violations: RefCell::default(),
            inner: Rc::new(MemoryStore::new()),
            quiet: Cell::new(false),
            hangs: Cell::new(true),
            heal: RefCell::default(),
            epoch: Cell::new(0),
            // Session ids never parse as names (like UUIDs), so tools can address them.
            roots: (0..roots).map(|i| format!("R{i}")).collect(),
            max_depth,
            accepted: RefCell::default(),
            tasks: RefCell::default(),
            notices: RefCell::default(),
            caller_delivery: RefCell::default(),
            reportable: RefCell::default(),
            seen: RefCell::default(),
            names: RefCell::default(),
            lifecycle: RefCell::default(),
            interrupted: RefCell::default(),
            runs: RefCell::default(),
            torn: RefCell::default(),
            root_budgets: RefCell::default(),
            budgeted: RefCell::default(),
            excess: RefCell::default(),
        }
    }

    /// The codes a message or start may meet in `root`'s tree: `allowed`,
    /// and `BUDGET_EXHAUSTED` where a budget may apply.
    pub fn allowed(&self, root: &str, allowed: &[crate::ErrorCode]) -> Vec<crate::ErrorCode> {
        let mut out = allowed.to_vec();
        if self.budgeted.borrow().contains(root) {
            out.push(crate::ErrorCode::BudgetExhausted);
        }
        out
    }

    pub fn violation(&self, what: String) {
        if self.verbose {
            eprintln!("[seed {} e{}] VIOLATION: {what}", self.seed, self.epoch.get());
        }
        self.violations.borrow_mut().push(format!("epoch {}: {what}", self.epoch.get()));
    }

    pub fn note(&self, what: impl FnOnce() -> String) {
        if self.verbose {
            eprintln!("[seed {} e{}] {}", self.seed, self.epoch.get(), what());
        }
    }

    /// `true` with probability `p`, unless quiet; counts `kind` when it fires.
    pub fn fault(&self, p: f64, kind: &'static str) -> bool {
        if self.quiet.get() || !self.rng.chance(p) {
            return false;
        }
        self.faults.bump(kind);
        true
    }

    /// Whether a hang fires now (a delay stands in while hangs are off).
    pub fn hang_fault(&self, p: f64, kind: &'static str) -> bool {
        self.hangs.get() && self.fault(p, kind)
    }

    pub async fn delay(&self, yields: u64) {
        for _ in 0..yields {
            yield_now().await;
        }
    }

    /// Waits until `signal` aborts (`CANCELLED`) or the partition heals (`Ok`).
    pub async fn hang(&self, signal: Option<&Signal>) -> Result<()> {
        let healed = self.heal.borrow().clone();
        match signal {
            Some(signal) => {
                signal
                    .guard(async move {
                        healed.wait().await;
                        Ok(())
                    })
                    .await
            }
            None => {
                healed.wait().await;
                Ok(())
            }
        }
    }

    /// Ends every hang in progress.
    pub fn heal(&self) {
        let healed = std::mem::take(&mut *self.heal.borrow_mut());
        healed.set(());
    }

    // ---- the model: the store as it is, read without faults ----------------

    /// Every root's rows, read from the store under the faults.
    pub fn model(&self) -> Model {
        let mut rows = BTreeMap::new();
        for root in &self.roots {
            let (store, id) = (self.inner.clone(), root.clone());
            let listed =
                crate::core::exec::block_on(
                    async move { listing::list_descendants(&*store, &id, &Signal::never()).await },
                );
            match listed {
                Ok(r) => {
                    rows.insert(root.clone(), r);
                }
                Err(e) => self.violation(format!("the model cannot list root {root}: {e}")),
            }
        }
        Model { rows }
    }

    /// Settlement notices from `child` in `parent`'s log.
    pub fn notices_in_log(&self, parent: &str, child: &str) -> u32 {
        let events = self.inner.read_now(parent, &ReadQuery::types(&[crate::core::event::MESSAGE], &Signal::never()));
        let from = |e: &&crate::SessionEvent| {
            let source = e.payload.get("source");
            let field = |k: &str| source.and_then(|s| s.get(k)).and_then(Value::as_str);
            field("kind") == Some("subagent-settled") && field("senderSessionId") == Some(child)
        };
        events.unwrap_or_default().iter().filter(from).count() as u32
    }

    /// The own catalog names of one session, from the store.
    /// The `delivery` a child's own `session/start` records.
    pub fn logged_delivery(&self, child: &str) -> Option<String> {
        let query = ReadQuery::types(&[crate::core::event::SESSION_START], &Signal::never());
        let starts = self.inner.read_now(child, &query)?;
        starts.last()?.payload.get("delivery").and_then(Value::as_str).map(str::to_owned)
    }

    pub fn committed_names(&self, session: &str) -> Vec<String> {
        let events = self.inner.read_now(session, &ReadQuery::default()).unwrap_or_default();
        crate::core::catalog::project_log(&events)
            .map(|entries| entries.into_iter().filter_map(|e| e.name.map(|n| n.into_string())).collect())
            .unwrap_or_default()
    }
}

/// The trees as the store holds them.
pub struct Model {
    pub rows: BTreeMap<String, Vec<Row>>,
}

impl Model {
    /// The root of a session's tree (a root is its own).
    pub fn root_of(&self, id: &str) -> Option<&str> {
        self.rows
            .iter()
            .find(|(root, rows)| root.as_str() == id || rows.iter().any(|r| r.id() == id))
            .map(|(root, _)| root.as_str())
    }

    pub fn child(&self, id: &str) -> Option<&ChildRow> {
        self.rows.values().flatten().find_map(|r| match r {
            Row::Child(c) if c.id == id => Some(c),
            _ => None,
        })
    }

    /// Creation ancestry from the root down to the direct creator.
    pub fn ancestors(&self, id: &str) -> Vec<String> {
        let Some(root) = self.root_of(id) else { return Vec::new() };
        if root == id {
            return Vec::new();
        }
        let rows = &self.rows[root];
        let mut chain = Vec::new();
        let mut current = id.to_owned();
        while let Some(row) = rows.iter().find(|r| r.id() == current) {
            let parent = row.parent_id().to_owned();
            chain.push(parent.clone());
            if parent == root || chain.len() > rows.len() {
                break;
            }
            current = parent;
        }
        chain.reverse();
        chain
    }

    /// The full name the runtime should give a member: `lead`, its path, or its id.
    pub fn full_name(&self, id: &str) -> Option<String> {
        if self.rows.contains_key(id) {
            return Some(crate::core::name::LEAD.to_owned());
        }
        self.child(id).map(|c| c.path_string().unwrap_or_else(|| c.id.clone()))
    }

    /// Every listed id of a tree (the root first).
    pub fn members(&self, root: &str) -> Vec<String> {
        let mut out = vec![root.to_owned()];
        if let Some(rows) = self.rows.get(root) {
            out.extend(rows.iter().map(|r| r.id().to_owned()));
        }
        out
    }

    /// Every `(id, path)` of a tree's named children.
    pub fn paths(&self, root: &str) -> Vec<(String, String)> {
        self.rows
            .get(root)
            .map(|rows| {
                rows.iter()
                    .filter_map(|r| match r {
                        Row::Child(c) => c.path_string().map(|p| (c.id.clone(), p)),
                        Row::Diagnostic(_) => None,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A text content block array.
pub fn text(s: &str) -> Value {
    Value::Array(vec![crate::core::result::text_block(s)])
}

/// One external run's state (the providers' runs), kept in the world for the
/// disposal invariant.
pub struct RunState {
    pub id: String,
    pub result: Deferred<Result<SubagentResult>>,
    pub disposed: Cell<u32>,
    pub dispose_fails: bool,
    /// Disposal answers before the run's result lands (a late answer).
    pub late_result: bool,
    pub stop: Signal,
}
