//! What the runtime shows of a tree: names resolved in the caller's tree,
//! listings with live state (running, idle or parked; budgets), and usage
//! rolled up from the logs.

use super::budget;
use super::machine::Tree;
use super::member::Phase;
use super::{Agent, BudgetState, Runtime};
use crate::core::error::Result;
use crate::core::listing::{self, Row};
use crate::core::signal::Signal;
use crate::core::store::ReadQuery;
use crate::core::usage::{self, Rollup, Totals};

/// Names of a live member and its direct creator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberNames {
    pub self_name: String,
    pub parent: Option<String>,
}

/// A listing row with live activity.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveRow {
    pub row: Row,
    pub live: Live,
}

/// What a live listing says of one member, the root's included.
#[derive(Clone, Debug, PartialEq)]
pub struct Live {
    /// `true` = `running`: resident and working; says nothing about task completion.
    pub running: bool,
    /// Resident and not running: `Idle` waits for input, `Parked` holds unread input an
    /// interrupt parked (`None` when running or not resident).
    pub rest: Option<Rest>,
    /// What the member and its subtree spent, read in the listing's own reads.
    pub usage: Rollup,
    /// The member's own budget, set and remaining, where it has one.
    pub budget: Option<BudgetState>,
    /// How its last turn stopped and its latest output, from its log (empty
    /// for a member without one: an external run, a diagnostic).
    pub turns: crate::core::turns::Turns,
}

/// How a resident member that is not running waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rest {
    Idle,
    Parked,
}

impl Runtime {
    /// Resolves `lead`, a full name or a Session id within the caller's tree.
    /// Grants no authority.
    pub async fn resolve_name(&self, caller: &Agent, text: &str, signal: &Signal) -> Result<String> {
        self.require_live(caller, "caller")?;
        let root = caller.0.root_id.clone();
        self.resolve_in_tree(&root, text, signal).await
    }

    /// The tree below `root_id` in pre-order, with live activity.
    pub async fn list_descendants(&self, root_id: &str, signal: &Signal) -> Result<Vec<LiveRow>> {
        Ok(self.list_tree(root_id, signal).await?.1)
    }

    /// The tree of `root_id`: the root's own live state, and every member
    /// below it in pre-order with its live state, in one listing's reads.
    pub async fn list_tree(&self, root_id: &str, signal: &Signal) -> Result<(Live, Vec<LiveRow>)> {
        let (rows, logs) = usage::list_with_usage(&*self.0.store, root_id, signal).await?;
        let (root_usage, usage) = usage::roll_up(root_id, &rows, &logs, |id| !self.turn_in_flight(id));
        let st = self.0.state.borrow();
        // Budgets: an open tree's ledger (the live view); else the root's log, when listed from a root.
        let ledger = st.members.get(root_id).and_then(|m| st.trees.get(&m.root_id)).map(Tree::ledger);
        let (root_budget, budgets) = match ledger {
            Some(ledger) => (
                ledger.budget_of(root_id).map(BudgetState::from),
                rows.iter().map(|r| ledger.budget_of(r.id()).map(BudgetState::from)).collect(),
            ),
            None => {
                let subtrees: Vec<Totals> = usage.iter().map(|u| u.subtree).collect();
                logs.get(root_id).map_or_else(
                    || (None, Vec::new()),
                    |l| budget::tree_budgets(&l.budgets, root_id, &rows, &root_usage.subtree, &subtrees),
                )
            }
        };
        let live = |id: &str, usage: Rollup, budget: Option<BudgetState>| {
            let member = st.members.get(id).filter(|m| m.phase() == Phase::Live && !m.is_external());
            let running = st.members.get(id).is_some_and(|m| m.is_busy());
            let rest = member.filter(|_| !running).map(|m| {
                if m.read(|s| s.life.has_parked_input()) {
                    Rest::Parked
                } else {
                    Rest::Idle
                }
            });
            let turns = logs.get(id).map(|l| l.turns.clone()).unwrap_or_default();
            Live { running, rest, usage, budget, turns }
        };
        let root = live(root_id, root_usage, root_budget);
        let mut budgets = budgets.into_iter();
        let rows = rows
            .into_iter()
            .zip(usage)
            .map(|(row, usage)| {
                let budget = budgets.next().flatten();
                // An external run has no log: the row's id may still name another log's entry.
                let external = matches!(&row, Row::Child(c) if c.mode == crate::core::catalog::Mode::External);
                let mut live = live(row.id(), usage, budget);
                if external || matches!(row, Row::Diagnostic(_)) {
                    live.turns = Default::default();
                }
                LiveRow { row, live }
            })
            .collect();
        Ok((root, rows))
    }

    /// What `target` (a full name, `lead` or a Session id of the root's tree;
    /// default the root) and its whole subtree spent, read from the logs: cold
    /// members included, so a new runtime over the same store reports the
    /// same totals. A turn that was lost, or a member that cannot be read,
    /// makes them incomplete.
    pub async fn usage(&self, root: &Agent, target: Option<&str>, signal: &Signal) -> Result<Rollup> {
        self.require_root(root)?;
        let root_id = root.session_id();
        let id = match target {
            None => root_id.to_owned(),
            Some(text) => self.resolve_in_tree(root_id, text, signal).await?,
        };
        if id == root_id {
            return self.rollup_of(&id, signal).await;
        }
        let rows = self.resume_rows(root_id, &id, signal).await?;
        match rows.iter().find(|r| r.id() == id) {
            None => Err(listing::not_a_member(&id)),
            // An external run has no log: its creator's records what it spent.
            Some(Row::Child(c)) if c.mode == crate::core::catalog::Mode::External => {
                let query = ReadQuery::types(usage::USAGE_TYPES, signal);
                let events = signal.guard(self.0.store.read(&c.parent_id, &query)).await?.unwrap_or_default();
                let mut own = Totals::default();
                for (child, spent) in usage::LogUsage::of(&events).externals {
                    if child == id {
                        own.usage.add(&spent);
                    }
                }
                Ok(Rollup { own, subtree: own })
            }
            Some(_) => self.rollup_of(&id, signal).await,
        }
    }

    /// Whether a resident member's turn is running (an open turn of anyone else was lost).
    pub(super) fn turn_in_flight(&self, session_id: &str) -> bool {
        self.0.state.borrow().members.get(session_id).is_some_and(|m| m.read(|s| s.life.in_turn()))
    }

    /// A member's own and subtree totals, from its log and its descendants'.
    pub(crate) async fn rollup_of(&self, id: &str, signal: &Signal) -> Result<Rollup> {
        let (rows, logs) = usage::list_with_usage(&*self.0.store, id, signal).await?;
        Ok(usage::roll_up(id, &rows, &logs, |m| !self.turn_in_flight(m)).0)
    }
}
