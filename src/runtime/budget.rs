//! Budgets in the live runtime: the I/O around each open tree's
//! [`Ledger`](crate::core::budget::Ledger), which decides.
//!
//! Every budget of a tree is a `subagent/budget` event in the root's log, so
//! opening a root finds them in the one log it reads anyway; only a tree
//! that has budgets pays one listing at open, for what each owner's subtree
//! spent so far. From then on the ledger counts in memory: each turn's end,
//! lost turn, external run and published child, as the logs record them.

use super::machine::Tree;
use super::member::{Member, Phase};
use super::{Agent, Runtime};
use crate::core::budget::{self, Budget, Budgets, Gate, Ledger, Spent};
use crate::core::catalog::Mode;
use crate::core::error::{Quoted, Result};
use crate::core::event;
use crate::core::hash::HashMap;
use crate::core::json::Value;
use crate::core::listing::Row;
use crate::core::signal::Signal;
use crate::core::usage;
use std::rc::Rc;

/// A member and its creators, nearest first: the chain whose budgets apply to it.
pub(crate) fn chain_of(member: &Member) -> Vec<&str> {
    std::iter::once(member.id.as_str()).chain(member.ancestors.iter().rev().map(String::as_str)).collect()
}

/// A member's own budget as a listing shows it: what was set and what is left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetState {
    pub set: Budget,
    pub remaining: Budget,
}

impl From<(Budget, Budget)> for BudgetState {
    fn from((set, remaining): (Budget, Budget)) -> BudgetState {
        BudgetState { set, remaining }
    }
}

impl BudgetState {
    pub fn to_value(&self) -> Value {
        Value::object([("set", Some(self.set.to_value())), ("remaining", Some(self.remaining.to_value()))])
    }
}

/// Each listed member's own budget from the logs: `budgets` as the root's log
/// records them, spent as the rows' subtree totals and descendants count.
pub(crate) fn row_budgets(budgets: &Budgets, rows: &[Row], subtrees: &[usage::Totals]) -> Vec<Option<BudgetState>> {
    if budgets.is_empty() {
        return vec![None; rows.len()];
    }
    let (_, below) = budget::below(rows, |_| 1);
    rows.iter()
        .enumerate()
        .map(|(i, row)| {
            let set = *budgets.get(row.id())?;
            Some(BudgetState { set, remaining: budget::remaining(&set, &subtrees[i].spent(below[i])) })
        })
        .collect()
}

/// [`row_budgets`], plus the root's own (its subtree is the whole listing).
pub(crate) fn tree_budgets(
    budgets: &Budgets,
    root_id: &str,
    rows: &[Row],
    root_subtree: &usage::Totals,
    subtrees: &[usage::Totals],
) -> (Option<BudgetState>, Vec<Option<BudgetState>>) {
    let (root_below, _) = budget::below(rows, |_| 1);
    let root = budgets
        .get(root_id)
        .map(|set| BudgetState { set: *set, remaining: budget::remaining(set, &root_subtree.spent(root_below)) });
    (root, row_budgets(budgets, rows, subtrees))
}

/// What each member's subtree spent as the logs of a listing from `root_id`
/// count it (usage, turns, descendants), plus one turn for each turn a log
/// holds open that `lost` says nobody runs (it ran, and its record comes later).
fn subtree_spent<'a>(
    root_id: &'a str,
    rows: &'a [Row],
    logs: &'a usage::Logs,
    lost: impl Fn(&str) -> bool + 'a,
) -> impl Fn(&str) -> Option<Spent> + 'a {
    let (root, rolled) = usage::roll_up(root_id, rows, logs, |_| true);
    let (root_below, below) = budget::below(rows, |_| 1);
    let open = |id: &str| u64::from(logs.get(id).is_some_and(|l| l.open_turn) && lost(id));
    let (root_open, open_below) = budget::below(rows, |r| open(r.id()));
    let index: HashMap<&str, usize> = rows.iter().enumerate().map(|(i, r)| (r.id(), i)).collect();
    let root_spent = {
        let mut s = root.subtree.spent(root_below);
        s.turns += open(root_id) + root_open;
        s
    };
    let spent: Vec<Spent> = (0..rows.len())
        .map(|i| {
            let mut s = rolled[i].subtree.spent(below[i]);
            s.turns += open(rows[i].id()) + open_below[i];
            s
        })
        .collect();
    move |id: &str| if id == root_id { Some(root_spent) } else { index.get(id).map(|&i| spent[i]) }
}

/// A budget counts every member: one whose log could not be read would
/// count as nothing spent, so the count is refused instead (try again).
fn unread(logs: &usage::Logs) -> Result<()> {
    if logs.read_failed() {
        return Err(crate::err!(
            PersistenceUnavailable,
            "the tree's logs could not all be read to count what its budgets have spent"
        ));
    }
    Ok(())
}

impl Runtime {
    /// The ledger of a tree opening with `budgets`: what each owner's subtree
    /// spent, from one listing of the logs (none for a tree without budgets).
    pub(crate) async fn ledger_from_logs(&self, root_id: &str, budgets: &Budgets, signal: &Signal) -> Result<Ledger> {
        let mut ledger = Ledger::default();
        if budgets.is_empty() {
            return Ok(ledger);
        }
        let (rows, logs) = usage::list_with_usage(&*self.0.store, root_id, signal).await?;
        unread(&logs)?;
        // Nothing of the tree runs yet: a turn its log holds open was lost, and counts.
        let spent = subtree_spent(root_id, &rows, &logs, |_| true);
        for (owner, limit) in budgets.iter() {
            // A budget whose member never published (its start failed) binds nobody.
            if let Some(spent) = spent(owner) {
                ledger.set(owner, *limit, spent);
            }
        }
        Ok(ledger)
    }

    /// Whether `member`'s next turn may run under its budgets.
    pub(crate) fn budget_gate(&self, member: &Member) -> Gate {
        self.0.state.borrow().trees.get(&member.root_id).map_or(Gate::Free, |t| t.gate(&chain_of(member)))
    }

    /// Runs one transition of `root_id`'s tree, when the tree is open.
    pub(crate) fn with_tree<T>(&self, root_id: &str, f: impl FnOnce(&mut Tree) -> T) -> Option<T> {
        self.0.state.borrow_mut().trees.get_mut(root_id).map(f)
    }

    /// Turn `turn_id` of `member` ended having spent `spent`: the budgets on
    /// its chain count it, and turns that waited for room are kicked.
    pub(crate) fn turn_spent(&self, member: &Member, turn_id: u64, spent: &Spent, record: Option<u64>) {
        let record = record.map(|seq| (member.id.as_str(), seq));
        let ended = |t: &mut Tree| t.turn_spent(turn_id, &chain_of(member), spent, record);
        if self.with_tree(&member.root_id, ended).unwrap_or(false) {
            let waiting: Vec<Rc<Member>> = {
                let st = self.0.state.borrow();
                st.tree_members(&member.root_id)
                    .filter(|m| m.phase() == Phase::Live && !m.read(|s| s.life.in_turn()) && m.is_busy())
                    .cloned()
                    .collect()
            };
            for m in waiting {
                self.kick(&m);
            }
        }
    }

    /// Spending outside a turn (an external run's), recorded at `record`.
    pub(crate) fn add_spent(&self, member: &Member, spent: &Spent, record: budget::Record<'_>) {
        self.with_tree(&member.root_id, |t| t.add_spent(&chain_of(member), spent, record));
    }

    /// The full name of budget owner `owner` on `member`'s chain, as errors show it.
    pub(crate) fn owner_name(&self, member: &Member, owner: &str) -> String {
        if owner == member.id {
            return member.full_name.clone();
        }
        if owner == member.root_id {
            return crate::core::name::LEAD.to_owned();
        }
        if let Some(m) = self.0.state.borrow().members.get(owner) {
            return m.full_name.clone();
        }
        // A cold creator: its path is a prefix of the member's, one segment per depth.
        let depth = member.ancestors.iter().position(|a| a == owner);
        match (depth, &member.path) {
            (Some(d), Some(path)) => path.split('/').take(d).collect::<Vec<_>>().join("/"),
            _ => owner.to_owned(),
        }
    }

    /// `BUDGET_EXHAUSTED` when a budget on `member`'s chain is spent (a
    /// message to it, or a start under it, with `spawning`).
    pub(crate) fn check_budget(&self, member: &Member, spawning: bool, what: impl FnOnce() -> String) -> Result<()> {
        let spent = self.with_tree(&member.root_id, |t| t.exhausted(&chain_of(member), spawning)).flatten();
        match spent {
            Some(spent) => Err(spent.error(&self.owner_name(member, &spent.owner), &what())),
            None => Ok(()),
        }
    }

    /// Sets (`Some`) or clears (`None`) the budget of `target` (`lead`, a full
    /// name or a Session id of the root's tree), under the root's authority.
    /// The value is clamped to what its creators' budgets have left, written
    /// to the root's log, and counts from what the target's subtree spent so
    /// far (one listing). Members parked by a spent budget that now has room
    /// run their pending input. Returns the effective budget and what is left.
    pub async fn set_budget(
        &self,
        root: &Agent,
        target: &str,
        budget: Option<Budget>,
        signal: &Signal,
    ) -> Result<Option<BudgetState>> {
        self.require_root(root)?;
        let root_id = root.session_id().to_owned();
        let id = self.resolve_in_tree(&root_id, target, signal).await?;
        // What is counted while the logs are read (and the budget written) is
        // kept with its record: added once the read shows it missed it.
        let token = self.with_tree(&root_id, |t| t.begin_audit(&id));
        let prepared = self.prepare_budget(root, &id, target, budget, signal).await;
        let counted = token.and_then(|token| self.with_tree(&root_id, |t| t.end_audit(token))).unwrap_or_default();
        let (effective, mut spent, rows, logs) = prepared?;
        for (record, s) in counted {
            let seen = record.is_some_and(|(session, seq)| {
                logs.get(&session).and_then(|l| l.last_seq).is_some_and(|last| seq <= last)
            });
            if !seen {
                spent.add(&s);
            }
        }
        self.with_tree(&root_id, |t| t.set_budget(&id, effective, spent));
        self.wake_exhausted(&root_id, &rows, &logs, signal).await;
        Ok(effective.map(|set| BudgetState { set, remaining: budget::remaining(&set, &spent) }))
    }

    /// `set_budget`'s reads and write: the effective budget (clamped to its
    /// creators' remaining), what the target's subtree spent as the logs say
    /// (a turn open in a log that nobody here runs was lost, and counts), and
    /// the listing, once the budget is in the root's log.
    async fn prepare_budget(
        &self,
        root: &Agent,
        id: &str,
        target: &str,
        budget: Option<Budget>,
        signal: &Signal,
    ) -> Result<(Option<Budget>, Spent, Vec<Row>, usage::Logs)> {
        let root_id = root.session_id();
        let (rows, logs) = usage::list_with_usage(&*self.0.store, root_id, signal).await?;
        unread(&logs)?;
        let index: HashMap<&str, usize> = rows.iter().enumerate().map(|(i, r)| (r.id(), i)).collect();
        // Its creators, nearest first.
        let mut creators: Vec<&str> = Vec::new();
        if id != root_id {
            let Some(&i) = index.get(id) else { return Err(crate::core::listing::not_a_member(id)) };
            if matches!(&rows[i], Row::Child(c) if c.mode == Mode::External) {
                return Err(crate::err!(
                    UnsupportedCapability,
                    "{} is an external run: a budget bounds local members (an external run's usage counts in its creators' budgets)",
                    Quoted(target)
                ));
            }
            let mut parent = rows[i].parent_id();
            while let Some(&p) = index.get(parent) {
                creators.push(rows[p].id());
                parent = rows[p].parent_id();
            }
            creators.push(root_id);
        }
        let spent = subtree_spent(root_id, &rows, &logs, |m| !self.turn_in_flight(m))(id).unwrap_or_default();
        let effective = budget.map(|b| {
            let room = self.with_tree(root_id, |t| t.remaining(&creators)).unwrap_or_default();
            b.clamp(&room)
        });
        if effective.is_some_and(|b| budget::Dimension::ALL.iter().any(|&d| b.get(d) == Some(0))) {
            return Err(crate::err!(
                BudgetExhausted,
                "the budget of {} cannot be set: a budget of its creators is spent",
                Quoted(target)
            ));
        }
        self.require_root(root)?;
        let payload = budget::event_payload(id, effective.as_ref());
        self.append(&root.0, vec![(event::BUDGET.to_owned(), payload)]).await?;
        Ok((effective, spent, rows, logs))
    }

    /// Whether no budget on the chain of `rows[index]` (a listing from
    /// `root_id`) is spent: its input parked by a spent budget may run.
    pub(crate) fn has_room(&self, root_id: &str, rows: &[Row], index: usize) -> bool {
        let mut chain = vec![rows[index].id()];
        let mut parent = rows[index].parent_id();
        while let Some(p) = rows[..index].iter().rposition(|r| r.id() == parent) {
            chain.push(rows[p].id());
            parent = rows[p].parent_id();
        }
        chain.push(root_id);
        self.with_tree(root_id, |t| t.exhausted(&chain, false)).flatten().is_none()
    }

    /// After a budget changed: resident members parked by a spent budget
    /// whose chain has room now run again; cold ones whose last stop was
    /// `budget-exhausted` are resumed (their pending input then runs).
    async fn wake_exhausted(&self, root_id: &str, rows: &[Row], logs: &usage::Logs, signal: &Signal) {
        let resident: Vec<Rc<Member>> = self.0.state.borrow().tree_members(root_id).cloned().collect();
        for m in resident {
            let open = !matches!(self.budget_gate(&m), Gate::Spent(_));
            if open && m.write(|s| s.life.unexhaust()) {
                self.kick(&m);
            }
        }
        for (i, row) in rows.iter().enumerate() {
            let exhausted = logs.get(row.id()).is_some_and(|l| l.exhausted);
            if !exhausted || self.0.state.borrow().members.contains_key(row.id()) || !self.has_room(root_id, rows, i) {
                continue;
            }
            // Released at once: the release moves it on (runs its input, or settles again if still spent).
            drop(self.resume_row(root_id, rows, i, signal).await);
        }
    }
}
