//! What a subtree may spend: a [`Budget`], its validation, and the
//! [`Ledger`] that enforces every budget of one tree without I/O.
//!
//! A budget bounds the total of its owner's whole subtree (the owner and
//! every descendant): tokens (input plus output), turns, spawns (members
//! created below it) and cost, as the logs' totals count them. Every budget
//! on a member's chain of creators applies to it.
//!
//! Reservation policy (the one rule that keeps parallel turns from
//! overrunning a shared budget): before a turn runs, it reserves from every
//! budget on its chain one turn and, for tokens and cost, half of what is
//! still unreserved (rounded up), the smallest over the chain; the host gets
//! that as its allowance. At the turn's end the reservation is replaced by
//! what the turn reported. So concurrent allowances never add up to more
//! than the room left, and a sibling starting beside a running turn still
//! gets half of what that turn left unreserved. A turn whose budget is spent
//! (its tokens, cost or turns reached) does not run; one whose room is all
//! reserved by running turns waits for them.

use crate::core::error::{ErrorCode, Quoted, Result, SubagentError};
use crate::core::event::{self, SessionEvent};
use crate::core::hash::HashMap;
use crate::core::json::{number_text, Value, MAX_SAFE_INTEGER};
use crate::core::listing::Row;

/// One dimension of a budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dimension {
    Tokens,
    Turns,
    Spawns,
    Cost,
}

impl Dimension {
    pub const ALL: [Dimension; 4] = [Dimension::Tokens, Dimension::Turns, Dimension::Spawns, Dimension::Cost];

    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Tokens => "tokens",
            Dimension::Turns => "turns",
            Dimension::Spawns => "spawns",
            Dimension::Cost => "cost",
        }
    }
}

/// Limits on a subtree's totals; an absent field is unbounded here (a
/// creator's budget may still bound it). Every present field is >= 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    pub tokens: Option<u64>,
    pub turns: Option<u64>,
    pub spawns: Option<u64>,
    pub cost: Option<u64>,
}

impl Budget {
    pub fn get(&self, d: Dimension) -> Option<u64> {
        match d {
            Dimension::Tokens => self.tokens,
            Dimension::Turns => self.turns,
            Dimension::Spawns => self.spawns,
            Dimension::Cost => self.cost,
        }
    }

    fn slot(&mut self, d: Dimension) -> &mut Option<u64> {
        match d {
            Dimension::Tokens => &mut self.tokens,
            Dimension::Turns => &mut self.turns,
            Dimension::Spawns => &mut self.spawns,
            Dimension::Cost => &mut self.cost,
        }
    }

    pub fn is_empty(&self) -> bool {
        Dimension::ALL.iter().all(|&d| self.get(d).is_none())
    }

    /// Reads `{ tokens?, turns?, spawns?, cost? }` strictly: an object with at
    /// least one of those keys and no other, each a positive integer up to
    /// 2^53 - 1. Anything else is `INVALID_ARGUMENT` naming the field.
    pub fn from_value(value: &Value, what: &str) -> Result<Budget> {
        let Some(fields) = value.as_object() else {
            return Err(invalid(format!(
                "{what} must be an object {{ tokens?, turns?, spawns?, cost? }}, not {}",
                value.kind()
            )));
        };
        let mut budget = Budget::default();
        for (key, v) in fields {
            let Some(&d) = Dimension::ALL.iter().find(|d| d.as_str() == key) else {
                return Err(invalid(format!(
                    "{what} has an unknown field {}; a budget has tokens, turns, spawns and cost",
                    crate::core::name::quote_truncated(key, 40)
                )));
            };
            let n = match v {
                Value::Null => continue,
                Value::Number(n) if n.fract() == 0.0 && (1.0..=MAX_SAFE_INTEGER).contains(n) => *n as u64,
                Value::Number(n) => {
                    return Err(invalid(format!(
                        "{what}.{key} must be a positive integer of at most 2^53 - 1, not {}",
                        number_text(*n)
                    )))
                }
                other => return Err(invalid(format!("{what}.{key} must be a positive integer, not {}", other.kind()))),
            };
            *budget.slot(d) = Some(n);
        }
        if budget.is_empty() {
            return Err(invalid(format!("{what} must set at least one of tokens, turns, spawns and cost")));
        }
        Ok(budget)
    }

    pub fn to_value(&self) -> Value {
        Value::object(Dimension::ALL.map(|d| (d.as_str(), self.get(d).map(Value::from))))
    }

    /// Each field this budget sets, lowered to `room`'s where that is smaller
    /// (a child's budget within its creator's remaining).
    pub fn clamp(&self, room: &Budget) -> Budget {
        let mut out = *self;
        for d in Dimension::ALL {
            if let (Some(mine), Some(left)) = (self.get(d), room.get(d)) {
                *out.slot(d) = Some(mine.min(left));
            }
        }
        out
    }

    /// `key value` pairs in order, for the model-facing text (`tokens 3000, turns 5`).
    pub fn describe(&self) -> String {
        let parts: Vec<String> =
            Dimension::ALL.iter().filter_map(|&d| self.get(d).map(|n| format!("{} {n}", d.as_str()))).collect();
        parts.join(", ")
    }
}

fn invalid(message: String) -> SubagentError {
    SubagentError::new(ErrorCode::InvalidArgument, message)
}

/// Amounts per dimension: what a subtree spent, or what running turns reserved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spent {
    pub tokens: u64,
    pub turns: u64,
    pub spawns: u64,
    pub cost: u64,
}

impl Spent {
    pub fn get(&self, d: Dimension) -> u64 {
        match d {
            Dimension::Tokens => self.tokens,
            Dimension::Turns => self.turns,
            Dimension::Spawns => self.spawns,
            Dimension::Cost => self.cost,
        }
    }

    pub fn add(&mut self, other: &Spent) {
        self.tokens = crate::core::json::safe_sum(self.tokens, other.tokens);
        self.turns = crate::core::json::safe_sum(self.turns, other.turns);
        self.spawns = crate::core::json::safe_sum(self.spawns, other.spawns);
        self.cost = crate::core::json::safe_sum(self.cost, other.cost);
    }

    fn sub(&mut self, other: &Spent) {
        self.tokens = self.tokens.saturating_sub(other.tokens);
        self.turns = self.turns.saturating_sub(other.turns);
        self.spawns = self.spawns.saturating_sub(other.spawns);
        self.cost = self.cost.saturating_sub(other.cost);
    }
}

/// Budgets by owner Session id, as a root's log records them.
pub(crate) type Budgets = HashMap<String, Budget>;

/// Folds `subagent/budget` events (own ones: the caller skips an inherited
/// prefix) into `budgets`: the last one per member wins, `null` clears. An
/// event that does not read as one is skipped (a stored log never stops a
/// tree from opening).
pub(crate) fn fold<'a>(budgets: &mut Budgets, events: impl IntoIterator<Item = &'a SessionEvent>) {
    // A damaged record changes nothing (its budget did not read: never read as cleared).
    for e in events.into_iter().filter(|e| e.kind == event::BUDGET && event::damaged(e).is_none()) {
        let Some(id) = e.payload.get("sessionId").and_then(Value::as_str) else { continue };
        match e.payload.get("budget") {
            None | Some(Value::Null) => {
                budgets.remove(id);
            }
            Some(b) => {
                if let Ok(b) = Budget::from_value(b, "budget") {
                    budgets.insert(id.to_owned(), b);
                }
            }
        }
    }
}

/// The payload of a `subagent/budget` event.
pub fn event_payload(session_id: &str, budget: Option<&Budget>) -> Value {
    Value::object([
        ("sessionId", Some(Value::from(session_id))),
        ("budget", Some(budget.map_or(Value::Null, Budget::to_value))),
    ])
}

/// `value` summed over the members below each row (the row itself
/// excluded), in the rows' (pre-order) order, and over every row for the
/// listing's root. With `|_| 1`: the descendants, the spawns a budget counts.
pub fn below(rows: &[Row], value: impl Fn(&Row) -> u64) -> (u64, Vec<u64>) {
    let index: HashMap<&str, usize> = rows.iter().enumerate().map(|(i, r)| (r.id(), i)).collect();
    let mut sums = vec![0u64; rows.len()];
    let mut root = 0u64;
    for i in (0..rows.len()).rev() {
        let with_self = sums[i] + value(&rows[i]);
        match index.get(rows[i].parent_id()) {
            Some(&p) if p < i => sums[p] += with_self,
            _ => root += with_self,
        }
    }
    (root, sums)
}

/// `limit - spent`, per field the budget sets (0 once spent or overshot).
pub fn remaining(limit: &Budget, spent: &Spent) -> Budget {
    let mut out = Budget::default();
    for d in Dimension::ALL {
        *out.slot(d) = limit.get(d).map(|l| l.saturating_sub(spent.get(d)));
    }
    out
}

/// A budget that stopped something: whose, and which of its fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exhausted {
    pub owner: String,
    pub dimension: Dimension,
    pub limit: u64,
}

impl Exhausted {
    /// `BUDGET_EXHAUSTED`, naming the budget and its owner (`owner` as the
    /// caller shows it: a full name).
    pub fn error(&self, owner: &str, what: &str) -> SubagentError {
        SubagentError::new(
            ErrorCode::BudgetExhausted,
            format!("{what}: the budget of {} ({} {}) is spent", Quoted(owner), self.dimension.as_str(), self.limit),
        )
    }
}

/// What a turn's host is handed: the most the turn may spend (tokens and
/// cost: its reservation) and the turns left, the smallest over its chain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Allowance {
    pub tokens: Option<u64>,
    pub cost: Option<u64>,
    pub turns: Option<u64>,
}

impl Allowance {
    pub fn to_value(&self) -> Value {
        let n = |v: Option<u64>| v.map(Value::from);
        Value::object([("tokens", n(self.tokens)), ("cost", n(self.cost)), ("turns", n(self.turns))])
    }
}

/// Whether a turn may run now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gate {
    /// No budget applies.
    Free,
    /// It may, within this allowance.
    Open(Allowance),
    /// Its room is reserved by running turns: it waits for one to end.
    Wait,
    /// A budget on its chain is spent: it takes no further turn.
    Spent(Exhausted),
}

struct Account {
    limit: Budget,
    spent: Spent,
    reserved: Spent,
}

/// Every budget of one tree: what each owner's subtree spent and what its
/// running turns and starts reserved. `chain` arguments list a member and
/// its creators, nearest first (the member itself first).
#[derive(Default)]
pub struct Ledger {
    accounts: HashMap<String, Account>,
    /// Reservations of running turns, by turn id: the budgets reserved on
    /// and the amount.
    turns: HashMap<u64, (Vec<String>, Spent)>,
    /// Open audits ([`Ledger::begin_audit`]): a budget being set while its
    /// subtree's logs are read, and what was counted meanwhile.
    audits: Vec<Audit>,
    next_audit: u64,
    /// A turn waits for room ([`Gate::Wait`]): the next end of a reserved
    /// turn looks for it ([`Ledger::wait_for_room`], [`Ledger::take_waiting`]).
    waiting: bool,
}

/// Where a spending is recorded: its event's session and seq (`None` when
/// the write's outcome is unknown).
pub type Record<'a> = Option<(&'a str, u64)>;

/// What was counted on a chain through `owner` while its logs were read.
struct Audit {
    token: u64,
    owner: String,
    counted: Vec<(Option<(String, u64)>, Spent)>,
}

impl Ledger {
    /// No budget, reservation or audit: nothing to count (a tree without
    /// budgets costs its messages and turns nothing more).
    pub fn is_empty(&self) -> bool {
        self.accounts.is_empty() && self.turns.is_empty() && self.audits.is_empty()
    }

    /// Sets (or replaces) `owner`'s budget; `spent` is what its subtree spent so far.
    pub fn set(&mut self, owner: &str, limit: Budget, spent: Spent) {
        let reserved = self.accounts.remove(owner).map(|a| a.reserved).unwrap_or_default();
        self.accounts.insert(owner.to_owned(), Account { limit, spent, reserved });
    }

    /// Removes `owner`'s budget.
    pub fn clear(&mut self, owner: &str) {
        self.accounts.remove(owner);
    }

    /// `owner`'s own budget: its limits and what is left of them.
    pub fn budget_of(&self, owner: &str) -> Option<(Budget, Budget)> {
        self.accounts.get(owner).map(|a| (a.limit, remaining(&a.limit, &a.spent)))
    }

    fn on_chain<'a>(&'a self, chain: &'a [&'a str]) -> impl Iterator<Item = (&'a str, &'a Account)> + 'a {
        chain.iter().filter_map(|id| self.accounts.get(*id).map(|a| (*id, a)))
    }

    /// The tightest remaining over the chain, per field any of its budgets sets.
    pub fn remaining(&self, chain: &[&str]) -> Budget {
        let mut out = Budget::default();
        for (_, a) in self.on_chain(chain) {
            let left = remaining(&a.limit, &a.spent);
            for d in Dimension::ALL {
                if let Some(l) = left.get(d) {
                    *out.slot(d) = Some(out.get(d).map_or(l, |o| o.min(l)));
                }
            }
        }
        out
    }

    /// The nearest budget on the chain whose tokens, turns or cost are spent
    /// (`spawns` too when `spawning`): what refuses a message or a start.
    pub fn exhausted(&self, chain: &[&str], spawning: bool) -> Option<Exhausted> {
        self.on_chain(chain).find_map(|(owner, a)| {
            Dimension::ALL.iter().find_map(|&d| {
                let limit = a.limit.get(d)?;
                let used = a.spent.get(d) + if d == Dimension::Spawns { a.reserved.spawns } else { 0 };
                let counts = d != Dimension::Spawns || spawning;
                (counts && used >= limit).then(|| Exhausted { owner: owner.to_owned(), dimension: d, limit })
            })
        })
    }

    /// Whether a turn on this chain may run now, without reserving.
    pub fn gate(&self, chain: &[&str]) -> Gate {
        if self.on_chain(chain).next().is_none() {
            return Gate::Free;
        }
        if let Some(spent) = self.exhausted(chain, false) {
            return Gate::Spent(spent);
        }
        let mut allowance = Allowance::default();
        for (_, a) in self.on_chain(chain) {
            for (d, slot) in [(Dimension::Tokens, &mut allowance.tokens), (Dimension::Cost, &mut allowance.cost)] {
                let Some(limit) = a.limit.get(d) else { continue };
                let free = limit.saturating_sub(a.spent.get(d)).saturating_sub(a.reserved.get(d));
                if free == 0 {
                    return Gate::Wait;
                }
                let share = free.div_ceil(2);
                *slot = Some(slot.map_or(share, |s: u64| s.min(share)));
            }
            if let Some(limit) = a.limit.turns {
                let free = limit.saturating_sub(a.spent.turns).saturating_sub(a.reserved.turns);
                if free == 0 {
                    return Gate::Wait;
                }
                allowance.turns = Some(allowance.turns.map_or(free, |t| t.min(free)));
            }
        }
        Gate::Open(allowance)
    }

    /// Reserves turn `turn`'s allowance on every budget of its chain (after
    /// [`Ledger::gate`] opened it, with no await between).
    pub fn reserve_turn(&mut self, turn: u64, chain: &[&str], allowance: &Allowance) {
        let amount =
            Spent { tokens: allowance.tokens.unwrap_or(0), turns: 1, spawns: 0, cost: allowance.cost.unwrap_or(0) };
        let owners: Vec<String> =
            chain.iter().filter(|id| self.accounts.contains_key(**id)).map(|s| s.to_string()).collect();
        for owner in &owners {
            if let Some(a) = self.accounts.get_mut(owner) {
                a.reserved.add(&amount);
            }
        }
        self.turns.insert(turn, (owners, amount));
    }

    /// Turn `turn` of the member `chain` names ended: its reservation (if
    /// it held one) is released and what it spent is counted on every budget
    /// of the chain, one set while it ran too. Returns whether it held a
    /// reservation (then turns waiting for room may run).
    pub fn end_turn(&mut self, turn: u64, chain: &[&str], spent: &Spent, record: Record<'_>) -> bool {
        let held = self.turns.remove(&turn);
        if let Some((owners, amount)) = &held {
            for owner in owners {
                if let Some(a) = self.accounts.get_mut(owner) {
                    a.reserved.sub(amount);
                }
            }
        }
        self.add(chain, spent, record);
        held.is_some()
    }

    /// Spending on the member `chain` names, recorded at `record`.
    pub fn add(&mut self, chain: &[&str], spent: &Spent, record: Record<'_>) {
        for id in chain {
            if let Some(a) = self.accounts.get_mut(*id) {
                a.spent.add(spent);
            }
        }
        for audit in self.audits.iter_mut().filter(|a| chain.contains(&a.owner.as_str())) {
            audit.counted.push((record.map(|(s, seq)| (s.to_owned(), seq)), *spent));
        }
    }

    /// A turn waits for room ([`Gate::Wait`]).
    pub fn wait_for_room(&mut self) {
        self.waiting = true;
    }

    /// Whether a turn waited for room, now taken (the end of a reserved turn
    /// kicks the members that wait once).
    pub fn take_waiting(&mut self) -> bool {
        std::mem::take(&mut self.waiting)
    }

    /// Begins setting `owner`'s budget from a read of its subtree's logs:
    /// until [`Ledger::end_audit`], what is counted on a chain through it is
    /// kept with its record, so the caller adds exactly what the read missed.
    pub fn begin_audit(&mut self, owner: &str) -> u64 {
        self.next_audit += 1;
        self.audits.push(Audit { token: self.next_audit, owner: owner.to_owned(), counted: Vec::new() });
        self.next_audit
    }

    /// What audit `token` saw counted, with each spending's record.
    pub fn end_audit(&mut self, token: u64) -> Vec<(Option<(String, u64)>, Spent)> {
        match self.audits.iter().position(|a| a.token == token) {
            Some(i) => self.audits.remove(i).counted,
            None => Vec::new(),
        }
    }

    /// A start under the member `chain` names: refused when a budget on
    /// the chain is spent (spawns included, counting starts in flight), else
    /// one spawn is reserved until [`Ledger::spawn_ended`].
    pub fn admit_spawn(&mut self, chain: &[&str]) -> Result<(), Exhausted> {
        if let Some(spent) = self.exhausted(chain, true) {
            return Err(spent);
        }
        let one = Spent { spawns: 1, ..Spent::default() };
        for id in chain {
            if let Some(a) = self.accounts.get_mut(*id) {
                a.reserved.add(&one);
            }
        }
        Ok(())
    }

    /// The start ended: one whose catalog entry committed (or may have:
    /// `counted`, at `record`) counts as spent.
    pub fn spawn_ended(&mut self, chain: &[&str], counted: bool, record: Record<'_>) {
        let one = Spent { spawns: 1, ..Spent::default() };
        for id in chain {
            if let Some(a) = self.accounts.get_mut(*id) {
                a.reserved.sub(&one);
            }
        }
        if counted {
            self.add(chain, &one, record);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Value {
        crate::core::json::parse(text, 64).unwrap()
    }

    fn budget(text: &str) -> Budget {
        Budget::from_value(&v(text), "budget").unwrap()
    }

    #[test]
    fn a_budget_is_read_strictly() {
        let b = budget(r#"{"tokens":1000,"turns":3}"#);
        assert_eq!(b, Budget { tokens: Some(1000), turns: Some(3), ..Budget::default() });
        assert_eq!(Budget::from_value(&b.to_value(), "budget").unwrap(), b);
        assert_eq!(b.describe(), "tokens 1000, turns 3");
        for (text, message) in [
            (r#"{"tokens":0}"#, "budget.tokens must be a positive integer of at most 2^53 - 1, not 0"),
            (r#"{"turns":-2}"#, "budget.turns must be a positive integer of at most 2^53 - 1, not -2"),
            (r#"{"cost":1.5}"#, "budget.cost must be a positive integer of at most 2^53 - 1, not 1.5"),
            (r#"{"spawns":"3"}"#, "budget.spawns must be a positive integer, not a string"),
            (r#"{}"#, "budget must set at least one of tokens, turns, spawns and cost"),
            (
                r#"{"dollars":3}"#,
                "budget has an unknown field \"dollars\"; a budget has tokens, turns, spawns and cost",
            ),
            (r#"7"#, "budget must be an object { tokens?, turns?, spawns?, cost? }, not a number"),
        ] {
            let e = Budget::from_value(&v(text), "budget").unwrap_err();
            assert_eq!((e.code, e.message.as_str()), (ErrorCode::InvalidArgument, message), "{text}");
        }
    }

    #[test]
    fn a_childs_budget_is_clamped_to_its_creators_remaining() {
        let child = budget(r#"{"tokens":5000,"turns":2}"#);
        let room = budget(r#"{"tokens":3000,"spawns":4}"#);
        assert_eq!(child.clamp(&room), budget(r#"{"tokens":3000,"turns":2}"#));
    }

    #[test]
    fn parallel_turns_share_the_room_and_never_reserve_past_it() {
        let mut ledger = Ledger::default();
        ledger.set("root", budget(r#"{"tokens":1000}"#), Spent::default());
        let (a, b) = (["a", "root"], ["b", "root"]);
        let Gate::Open(first) = ledger.gate(&a) else { panic!("open") };
        assert_eq!(first.tokens, Some(500));
        ledger.reserve_turn(1, &a, &first);
        let Gate::Open(second) = ledger.gate(&b) else { panic!("a sibling is not starved") };
        assert_eq!(second.tokens, Some(250));
        ledger.reserve_turn(2, &b, &second);
        // Within their allowances, they cannot overrun together.
        ledger.end_turn(1, &a, &Spent { tokens: 500, turns: 1, ..Spent::default() }, None);
        ledger.end_turn(2, &b, &Spent { tokens: 250, turns: 1, ..Spent::default() }, None);
        assert_eq!(ledger.remaining(&a).tokens, Some(250));
        // Down to one token of room: one turn takes it and the next waits for it.
        ledger.set("root", budget(r#"{"tokens":751}"#), Spent { tokens: 750, turns: 2, ..Spent::default() });
        let Gate::Open(last) = ledger.gate(&a) else { panic!("open") };
        assert_eq!(last.tokens, Some(1));
        ledger.reserve_turn(3, &a, &last);
        assert_eq!(ledger.gate(&b), Gate::Wait);
        // A host past its allowance overshoots by its excess, and nothing runs after.
        ledger.end_turn(3, &a, &Spent { tokens: 9, turns: 1, ..Spent::default() }, None);
        let Gate::Spent(spent) = ledger.gate(&b) else { panic!("spent") };
        assert_eq!((spent.owner.as_str(), spent.dimension, spent.limit), ("root", Dimension::Tokens, 751));
        assert_eq!(ledger.remaining(&b).tokens, Some(0));
    }

    #[test]
    fn the_tightest_budget_on_the_chain_applies() {
        let mut ledger = Ledger::default();
        ledger.set("root", budget(r#"{"turns":10,"tokens":100}"#), Spent { turns: 8, ..Spent::default() });
        ledger.set("lead-child", budget(r#"{"turns":5}"#), Spent::default());
        let chain = ["grandchild", "lead-child", "root"];
        assert_eq!(ledger.gate(&chain), Gate::Open(Allowance { tokens: Some(50), cost: None, turns: Some(2) }));
        assert_eq!(ledger.gate(&["x"]), Gate::Free, "no budget on its chain");
        ledger.reserve_turn(1, &chain, &Allowance { tokens: Some(50), cost: None, turns: Some(2) });
        ledger.reserve_turn(2, &chain, &Allowance { tokens: Some(25), cost: None, turns: Some(1) });
        assert_eq!(ledger.gate(&chain), Gate::Wait, "both remaining turns are reserved");
        ledger.end_turn(1, &chain, &Spent { turns: 1, ..Spent::default() }, None);
        ledger.end_turn(2, &chain, &Spent::default(), None); // stopped before its host saw it: no turn
        assert_eq!(ledger.remaining(&chain).turns, Some(1));
        assert!(!ledger.end_turn(2, &chain, &Spent::default(), None), "a turn ends once");
    }

    #[test]
    fn spawns_count_starts_in_flight_and_commit_only_when_published() {
        let mut ledger = Ledger::default();
        ledger.set("root", budget(r#"{"spawns":2}"#), Spent::default());
        let chain = ["root"];
        ledger.admit_spawn(&chain).unwrap();
        ledger.admit_spawn(&chain).unwrap();
        let refused = ledger.admit_spawn(&chain).unwrap_err();
        assert_eq!(refused.dimension, Dimension::Spawns);
        assert_eq!(
            refused.error("lead", "starting a child").message,
            "starting a child: the budget of \"lead\" (spawns 2) is spent"
        );
        ledger.spawn_ended(&chain, false, None); // that start failed: its spawn is free again
        ledger.admit_spawn(&chain).unwrap();
        ledger.spawn_ended(&chain, true, None);
        ledger.spawn_ended(&chain, true, None);
        assert_eq!(ledger.budget_of("root").unwrap().1.spawns, Some(0));
        assert_eq!(ledger.gate(&chain), Gate::Open(Allowance::default()), "spawns do not stop turns");
    }
}
