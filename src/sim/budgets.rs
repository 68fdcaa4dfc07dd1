//! Budgets under the simulation (issue 46): roots opened with a budget,
//! children started with one (by the host or a model's `spawn_agent`),
//! budgets raised while turns run, and hosts that report usage within their
//! allowance, or past it now and then (counted per tree as excess).
//!
//! The proof, checked on the store after every epoch: each member's subtree
//! totals as the runtime's listing rolls them up equal the sum of its
//! members' own totals read from their whole logs (failed, aborted, lost and
//! disposed members included); and no budget is exceeded past the excess its
//! hosts reported: subtree tokens and cost at most the largest limit the
//! budget had plus its tree's excess, turns (a lost turn included) and spawns
//! at most the largest limit.

use super::ctx::Ctx;
use crate::core::budget::{self, Budget, Dimension};
use crate::core::event::{self, SessionEvent};
use crate::core::hash::HashMap;
use crate::core::json::Value;
use crate::core::listing::Row;
use crate::core::signal::Signal;
use crate::core::store::ReadQuery;
use crate::core::usage::{self, Usage};
use crate::runtime::ports::Turn;
use std::collections::BTreeMap;

/// A random budget: one to four dimensions, small enough to run out.
pub fn random(ctx: &Ctx) -> Budget {
    let mut b = Budget::default();
    while b.is_empty() {
        if ctx.rng.chance(0.5) {
            b.tokens = Some(ctx.rng.range(50, 3000));
        }
        if ctx.rng.chance(0.4) {
            b.turns = Some(ctx.rng.range(1, 25));
        }
        if ctx.rng.chance(0.3) {
            b.spawns = Some(ctx.rng.range(1, 10));
        }
        if ctx.rng.chance(0.2) {
            b.cost = Some(ctx.rng.range(20, 800));
        }
    }
    b
}

/// `b` raised: each field it sets, grown by up to half again.
pub fn raised(ctx: &Ctx, b: &Budget) -> Budget {
    let grow = |v: Option<u64>| v.map(|n| n + ctx.rng.below(n / 2 + 2));
    Budget { tokens: grow(b.tokens), turns: grow(b.turns), spawns: grow(b.spawns), cost: grow(b.cost) }
}

/// What a turn's host reports spending: within the turn's allowance, or past
/// it now and then (a fault; the excess is counted for its tree).
pub fn usage(ctx: &Ctx, turn: &Turn) -> Usage {
    let allowance = turn.budget.unwrap_or_default();
    let spend = |limit: Option<u64>, free: u64, kind: &'static str| -> (u64, u64) {
        match limit {
            Some(a) if ctx.fault(0.05, kind) => {
                let over = ctx.rng.range(1, 40);
                (a + over, over)
            }
            Some(a) => (ctx.rng.range(0, a), 0),
            None => (ctx.rng.below(free), 0),
        }
    };
    let (tokens, over_tokens) = spend(allowance.tokens, 300, "host.overshoot_tokens");
    let (cost, over_cost) = spend(allowance.cost, 50, "host.overshoot_cost");
    if over_tokens + over_cost > 0 {
        let mut excess = ctx.excess.borrow_mut();
        let e = excess.entry(turn.root_id.clone()).or_default();
        e.0 += over_tokens;
        e.1 += over_cost;
    }
    ctx.note(|| {
        format!(
            "turn of {} ({}) with allowance {allowance:?} spends {tokens} tokens, cost {cost}",
            turn.name, turn.session_id
        )
    });
    Usage { input_tokens: tokens - tokens / 3, output_tokens: tokens / 3, cost: Some(cost), ..Usage::default() }
}

/// The budgets a root's log records, each the largest value every field
/// had since it was last set anew (a lowered or clamped budget still bounds
/// turns that began under the larger one).
fn budgets_of(log: &[SessionEvent]) -> BTreeMap<String, Budget> {
    let mut out: BTreeMap<String, Budget> = BTreeMap::new();
    for e in log.iter().filter(|e| e.kind == event::BUDGET) {
        let Some(id) = e.payload.get("sessionId").and_then(Value::as_str) else { continue };
        match e.payload.get("budget").map(|b| Budget::from_value(b, "budget")) {
            Some(Ok(b)) => {
                let merged = out.get(id).map_or(b, |old| {
                    let max = |a: Option<u64>, b: Option<u64>| a.max(b);
                    Budget {
                        tokens: max(old.tokens, b.tokens),
                        turns: max(old.turns, b.turns),
                        spawns: max(old.spawns, b.spawns),
                        cost: max(old.cost, b.cost),
                    }
                });
                out.insert(id.to_owned(), merged);
            }
            _ => {
                out.remove(id);
            }
        }
    }
    out
}

/// The checks of the module doc, on the store as it is after an epoch.
pub fn check(ctx: &Ctx) {
    let model = ctx.model();
    for root in &ctx.roots {
        let Some(rows) = model.rows.get(root) else { continue };
        let read = |id: &str| ctx.inner.read_now(id, &ReadQuery::default()).unwrap_or_default();
        // Own totals from each whole log, by a fold of its own.
        let mut own: HashMap<String, (Usage, u64, u64)> = HashMap::default();
        for id in std::iter::once(root.as_str()).chain(rows.iter().map(Row::id)) {
            let log = read(id);
            let inherited = event::inherited_event_count(&log);
            let (mut spent, mut turns, mut open) = (Usage::default(), 0u64, false);
            for e in log.iter().filter(|e| e.seq >= inherited) {
                match e.kind.as_str() {
                    event::TURN_START => open = true,
                    event::TURN_END => {
                        open = false;
                        if let Some((u, _)) = usage::turn_usage(&e.payload) {
                            turns += 1;
                            if let Some(u) = u {
                                spent.add(&u);
                            }
                        }
                    }
                    _ => {}
                }
            }
            own.insert(id.to_owned(), (spent, turns, u64::from(open)));
        }
        // Subtree sums, children before their creators.
        let index: BTreeMap<&str, usize> = rows.iter().enumerate().map(|(i, r)| (r.id(), i)).collect();
        let mut subtree: Vec<(Usage, u64, u64)> = rows.iter().map(|r| own[r.id()]).collect();
        let mut whole = own[root.as_str()];
        for i in (0..rows.len()).rev() {
            let s = subtree[i];
            let target = match index.get(rows[i].parent_id()) {
                Some(&p) if p < i => &mut subtree[p],
                _ => &mut whole,
            };
            target.0.add(&s.0);
            target.1 += s.1;
            target.2 += s.2;
        }
        // The runtime's roll-up from its listing's reads agrees exactly.
        let (store, id) = (ctx.inner.clone(), root.clone());
        let listed =
            crate::core::exec::block_on(async move { usage::list_with_usage(&*store, &id, &Signal::never()).await });
        let Ok((listed_rows, logs)) = listed else {
            ctx.violation(format!("the usage listing of {root} failed on a quiet store"));
            continue;
        };
        let (rolled_root, rolled) = usage::roll_up(root, &listed_rows, &logs, |_| true);
        let agree = |id: &str, r: &usage::Rollup, s: &(Usage, u64, u64)| {
            if r.subtree.usage != s.0 || r.subtree.turns != s.1 {
                ctx.violation(format!(
                    "{id}'s subtree totals {:?} ({} turns) are not the sum of its members' own, {:?} ({} turns)",
                    r.subtree.usage, r.subtree.turns, s.0, s.1
                ));
            }
        };
        agree(root, &rolled_root, &whole);
        for (r, row) in rolled.iter().zip(&listed_rows) {
            if let Some(&i) = index.get(row.id()) {
                agree(row.id(), r, &subtree[i]);
            }
        }
        // No budget exceeded past the excess its tree's hosts reported.
        let (root_below, below) = budget::below(rows, |_| 1);
        let (excess_tokens, excess_cost) = ctx.excess.borrow().get(root).copied().unwrap_or_default();
        for (owner, limit) in budgets_of(&read(root)) {
            let (spent, spawns) = if owner == *root {
                (whole, root_below)
            } else if let Some(&i) = index.get(owner.as_str()) {
                (subtree[i], below[i])
            } else {
                continue; // its start never published
            };
            let (u, turns, open) = spent;
            for (d, used, slack) in [
                (Dimension::Tokens, u.tokens(), excess_tokens),
                (Dimension::Cost, u.cost.unwrap_or(0), excess_cost),
                (Dimension::Turns, turns + open, 0),
                (Dimension::Spawns, spawns, 0),
            ] {
                if let Some(l) = limit.get(d) {
                    if used > l + slack {
                        ctx.note(|| {
                            let log = read(&owner);
                            let turns: Vec<String> = log
                                .iter()
                                .filter(|e| e.kind.starts_with("turn/") || e.kind == event::BUDGET)
                                .map(|e| format!("{} {} {}", e.seq, e.kind, e.payload.to_json()))
                                .collect();
                            format!("{owner}'s turn events: {turns:#?}")
                        });
                        ctx.violation(format!(
                            "the budget of {owner} in {root} is exceeded: {} {used} of {l} (hosts' excess {slack})",
                            d.as_str()
                        ));
                    }
                }
            }
            ctx.ops.bump("budget.checked");
        }
    }
}
