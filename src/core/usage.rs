//! What a tree spends: the [`Usage`] a turn or an external run reports (names
//! as the AI SDK's), its validation, and the per-member and per-subtree
//! [`Totals`] folded from the logs.
//!
//! A turn's usage rides on its `turn/end` event; an external run's, which has
//! no log of its own, on a `subagent/usage` event in its creator's log. A turn
//! the host never finished (a crash) has unknown usage: its recorded end says
//! `usageUnknown`, and totals that include it, or a turn still open in a log,
//! are not `complete`.

use crate::core::budget::Spent;
use crate::core::catalog::Mode;
use crate::core::error::{Result, SubagentError};
use crate::core::event::{self, SessionEvent};
use crate::core::hash::HashMap;
use crate::core::json::{number_text, safe_sum, Value, MAX_SAFE_INTEGER};
use crate::core::listing::{Lister, Row};
use crate::core::signal::Signal;
use crate::core::store::{ReadQuery, ReadResult, Store};

/// Tokens (and cost) one turn or run reports. Integers; `cost` is in the
/// host's own unit (micro-dollars, say), summed as given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: Option<u64>,
    pub cache_write_tokens: Option<u64>,
    pub reasoning_tokens: Option<u64>,
    pub cost: Option<u64>,
}

/// The fields in the order they are written, with their JS names.
const REQUIRED: [&str; 2] = ["inputTokens", "outputTokens"];
const OPTIONAL: [&str; 4] = ["cacheReadTokens", "cacheWriteTokens", "reasoningTokens", "cost"];

impl Usage {
    /// Reads `{ inputTokens, outputTokens, cacheReadTokens?, ... }`. Every
    /// field is a non-negative integer up to 2^53 - 1; anything else is
    /// `INVALID_ARGUMENT` naming the field (`what` starts it: `usage`).
    pub fn from_value(value: &Value, what: &str) -> Result<Usage> {
        if value.as_object().is_none() {
            return Err(invalid(format!(
                "{what} must be an object {{inputTokens, outputTokens, ...}}, not {}",
                value.kind()
            )));
        }
        let field = |key: &str| -> Result<Option<u64>> {
            match value.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) if n.fract() == 0.0 && (0.0..=MAX_SAFE_INTEGER).contains(n) => {
                    Ok(Some(*n as u64))
                }
                Some(Value::Number(n)) => Err(invalid(format!(
                    "{what}.{key} must be a non-negative integer of at most 2^53 - 1, not {}",
                    number_text(*n)
                ))),
                Some(other) => {
                    Err(invalid(format!("{what}.{key} must be a non-negative integer, not {}", other.kind())))
                }
            }
        };
        let [input, output] = REQUIRED.map(field);
        let [cache_read, cache_write, reasoning, cost] = OPTIONAL.map(field);
        Ok(Usage {
            input_tokens: input?.unwrap_or(0),
            output_tokens: output?.unwrap_or(0),
            cache_read_tokens: cache_read?,
            cache_write_tokens: cache_write?,
            reasoning_tokens: reasoning?,
            cost: cost?,
        })
    }

    /// [`Usage::from_value`] for what a host reports: an unknown field is
    /// `INVALID_ARGUMENT` naming it and the closest field (`input_tokens`:
    /// did you mean `inputTokens`?), never a count silently left at 0.
    pub fn from_host(value: &Value, what: &str) -> Result<Usage> {
        let known: Vec<&str> = REQUIRED.iter().chain(OPTIONAL.iter()).copied().collect();
        crate::core::listing::check_fields(value, &known, what)?;
        Usage::from_value(value, what)
    }

    pub fn to_value(&self) -> Value {
        let n = |v: u64| Some(Value::from(v));
        Value::object([
            ("inputTokens", n(self.input_tokens)),
            ("outputTokens", n(self.output_tokens)),
            ("cacheReadTokens", self.cache_read_tokens.and_then(n)),
            ("cacheWriteTokens", self.cache_write_tokens.and_then(n)),
            ("reasoningTokens", self.reasoning_tokens.and_then(n)),
            ("cost", self.cost.and_then(n)),
        ])
    }

    /// Input plus output tokens (what `list_agents` shows).
    pub fn tokens(&self) -> u64 {
        safe_sum(self.input_tokens, self.output_tokens)
    }

    /// Adds `other` field by field; an optional field is present once either side has it.
    pub fn add(&mut self, other: &Usage) {
        let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(safe_sum(a.unwrap_or(0), b.unwrap_or(0))),
        };
        self.input_tokens = safe_sum(self.input_tokens, other.input_tokens);
        self.output_tokens = safe_sum(self.output_tokens, other.output_tokens);
        self.cache_read_tokens = sum(self.cache_read_tokens, other.cache_read_tokens);
        self.cache_write_tokens = sum(self.cache_write_tokens, other.cache_write_tokens);
        self.reasoning_tokens = sum(self.reasoning_tokens, other.reasoning_tokens);
        self.cost = sum(self.cost, other.cost);
    }
}

/// What one turn reported, as a budget counts it: its tokens and cost, and
/// one turn when `counted` (the logs count a turn that consumed input or
/// reported usage, and a lost one).
pub fn turn_spent(usage: Option<&Usage>, counted: bool) -> Spent {
    let usage = usage.copied().unwrap_or_default();
    Spent { tokens: usage.tokens(), turns: u64::from(counted), spawns: 0, cost: usage.cost.unwrap_or(0) }
}

fn invalid(message: String) -> SubagentError {
    SubagentError::new(crate::core::error::ErrorCode::InvalidArgument, message)
}

/// Usage summed over turns (or members), with how many turns, and whether
/// every one of them reported what it spent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Totals {
    pub usage: Usage,
    pub turns: u64,
    /// No lost turn (a crash mid-turn) and no unreadable member is in the sum.
    pub complete: bool,
}

impl Default for Totals {
    fn default() -> Self {
        Totals { usage: Usage::default(), turns: 0, complete: true }
    }
}

impl Totals {
    /// Unknown: a member whose log could not be read.
    pub fn unknown() -> Totals {
        Totals { complete: false, ..Totals::default() }
    }

    pub fn add(&mut self, other: &Totals) {
        self.usage.add(&other.usage);
        self.turns = safe_sum(self.turns, other.turns);
        self.complete &= other.complete;
    }

    /// One ended turn: its usage (`None` when it reported none) and whether it is known.
    pub fn add_turn(&mut self, usage: Option<&Usage>, known: bool) {
        if let Some(u) = usage {
            self.usage.add(u);
        }
        self.turns = safe_sum(self.turns, 1);
        self.complete &= known;
    }

    /// What a budget counts of these totals, with the subtree's number of descendants.
    pub fn spent(&self, spawns: u64) -> Spent {
        Spent { tokens: self.usage.tokens(), turns: self.turns, spawns, cost: self.usage.cost.unwrap_or(0) }
    }

    /// `{ inputTokens, ..., turns }` (`complete` travels beside it).
    pub fn to_value(&self) -> Value {
        let mut value = self.usage.to_value();
        if let Value::Object(fields) = &mut value {
            fields.push(("turns".to_owned(), Value::from(self.turns)));
        }
        value
    }
}

/// A member's totals: its own turns (or run), and its whole subtree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rollup {
    pub own: Totals,
    pub subtree: Totals,
}

impl Rollup {
    /// `{ own, subtree, complete }`, each total `Usage & { turns }`.
    pub fn to_value(&self) -> Value {
        Value::object([
            ("own", Some(self.own.to_value())),
            ("subtree", Some(self.subtree.to_value())),
            ("complete", Some(Value::Bool(self.own.complete && self.subtree.complete))),
        ])
    }
}

/// What a log says a member spent: its own turns (`turn/end` after its
/// inherited prefix), and the external runs it created (`subagent/usage`,
/// by child id). `open_turn`: its last turn started and has not ended (it is
/// running, or it was lost if nobody runs it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogUsage {
    pub own: Totals,
    pub externals: Vec<(String, Usage)>,
    pub open_turn: bool,
    /// Its last turn ended `budget-exhausted` (its input waits for room).
    pub exhausted: bool,
    /// The last seq the read returned: a record at a later seq was not seen.
    pub last_seq: Option<u64>,
    /// The budgets its log records (a root's log records its tree's).
    pub(crate) budgets: crate::core::budget::Budgets,
    /// How its last turn stopped and its latest output (read in the same events).
    pub turns: crate::core::turns::Turns,
}

impl LogUsage {
    pub fn of(events: &[SessionEvent]) -> LogUsage {
        let inherited = event::inherited_event_count(events);
        let mut out = LogUsage::default();
        let mut open = false;
        crate::core::budget::fold(&mut out.budgets, events.iter().filter(|e| e.seq >= inherited));
        for e in events.iter().filter(|e| e.seq >= inherited) {
            match e.kind.as_str() {
                event::TURN_START => open = true,
                event::TURN_END => {
                    open = false;
                    out.exhausted = e.payload.get("stopReason").and_then(Value::as_str)
                        == Some(crate::core::stop::StopReason::BudgetExhausted.as_str());
                    if let Some(turn) = turn_usage(&e.payload) {
                        out.own.add_turn(turn.0.as_ref(), turn.1);
                    }
                }
                event::SUBAGENT_USAGE => {
                    let child = e.payload.get("childId").and_then(Value::as_str);
                    let usage = e.payload.get("usage").and_then(|u| Usage::from_value(u, "usage").ok());
                    if let (Some(child), Some(usage)) = (child, usage) {
                        out.externals.push((child.to_owned(), usage));
                    }
                }
                _ => {}
            }
        }
        out.open_turn = open;
        out.turns = crate::core::turns::Turns::of(events);
        out.last_seq = events.last().map(|e| e.seq);
        out
    }
}

/// The event types a usage listing reads with each catalog (one read per
/// member, as a listing makes).
pub const USAGE_TYPES: &[&str] =
    &[event::CATALOG, event::SESSION_START, event::TURN_START, event::TURN_END, event::SUBAGENT_USAGE, event::BUDGET];

/// A listing from `root` that also reads what each member spent, in the same
/// reads (so the same round trips as [`crate::core::listing::list_descendants`]):
/// the rows, and each read log's [`LogUsage`] by Session id.
pub async fn list_with_usage(store: &dyn Store, root: &str, signal: &Signal) -> Result<(Vec<Row>, Logs)> {
    let mut lister = Lister::new(root);
    let query = ReadQuery { damaged: true, ..ReadQuery::types(USAGE_TYPES, signal) };
    let mut logs = Logs::default();
    while !lister.wants().is_empty() {
        let ids = lister.wants().to_vec();
        let reads: Result<Vec<ReadResult>> =
            crate::core::listing::read_level(store, &ids, &query, signal, !lister.at_root()).await;
        signal.check()?;
        match &reads {
            Ok(reads) => {
                for (id, read) in ids.iter().zip(reads) {
                    // `of` reads only the kinds it folds, so a store that ignored the types costs no copy.
                    match read {
                        Ok(Some(events)) => logs.0.insert(id.clone(), LogUsage::of(events)),
                        Ok(None) => None,
                        Err(_) => {
                            logs.1 = true;
                            None
                        }
                    };
                }
            }
            Err(_) => logs.1 = true,
        }
        lister.answer(reads)?;
    }
    Ok((lister.rows(), logs))
}

/// The read logs' usage, by Session id, and whether some read failed.
#[derive(Default)]
pub struct Logs(HashMap<String, LogUsage>, bool);

impl Logs {
    /// Some member's log could not be read (its totals are unknown, not zero).
    pub fn read_failed(&self) -> bool {
        self.1
    }

    pub fn get(&self, id: &str) -> Option<&LogUsage> {
        self.0.get(id)
    }

    pub fn insert(&mut self, id: String, log: LogUsage) {
        self.0.insert(id, log);
    }
}

/// Each row's own and subtree totals (in the rows' order), and the root's.
/// `open(id)`: whether an open turn of that member is lost (nobody runs it),
/// which makes its totals incomplete. A row whose log could not be read
/// (a diagnostic, or a member the listing did not read) is unknown; an
/// external run spent what its creator's log recorded for it; a run no
/// listing shows (one its caller took the result of) counts in its creator's
/// subtree.
pub fn roll_up(root: &str, rows: &[Row], logs: &Logs, lost: impl Fn(&str) -> bool) -> (Rollup, Vec<Rollup>) {
    let own_of = |id: &str| -> Totals {
        match logs.get(id) {
            Some(log) => {
                let mut own = log.own;
                own.complete &= !(log.open_turn && lost(id));
                own
            }
            None => Totals::unknown(),
        }
    };
    let listed: HashMap<&str, usize> = rows.iter().enumerate().map(|(i, r)| (r.id(), i)).collect();
    let mut owns: Vec<Totals> = rows
        .iter()
        .map(|row| match row {
            Row::Child(c) if c.mode == Mode::External => Totals::default(),
            Row::Child(c) => own_of(&c.id),
            Row::Diagnostic(_) => Totals::unknown(),
        })
        .collect();
    let root_own = own_of(root);
    let mut root_subtree = root_own;
    let mut subtrees: Vec<Totals> = owns.clone();
    // External runs' usage, recorded in their creators' logs.
    for (creator, log) in logs.0.iter() {
        for (child, usage) in &log.externals {
            let run = Totals { usage: *usage, turns: 0, complete: true };
            match listed.get(child.as_str()) {
                Some(&i) if matches!(&rows[i], Row::Child(c) if c.mode == Mode::External) => {
                    owns[i].add(&run);
                    subtrees[i].add(&run);
                }
                _ if creator == root => root_subtree.add(&run),
                _ => {
                    if let Some(&i) = listed.get(creator.as_str()) {
                        subtrees[i].add(&run);
                    }
                }
            }
        }
    }
    // Children before their creators: pre-order reversed.
    for i in (0..rows.len()).rev() {
        let sub = subtrees[i];
        match listed.get(rows[i].parent_id()) {
            Some(&p) if p < i => subtrees[p].add(&sub),
            _ => root_subtree.add(&sub),
        }
    }
    let rolled = owns.into_iter().zip(subtrees).map(|(own, subtree)| Rollup { own, subtree }).collect();
    (Rollup { own: root_own, subtree: root_subtree }, rolled)
}

/// A `turn/end`'s usage and whether it is known; `None` for an end that ran
/// no turn (stopped before its host saw it: it consumed nothing).
pub fn turn_usage(payload: &Value) -> Option<(Option<Usage>, bool)> {
    let usage = payload.get("usage").and_then(|u| Usage::from_value(u, "usage").ok());
    // A damaged end whose usage did not read spent an unknown amount.
    let unknown = payload.get("usageUnknown").and_then(Value::as_bool) == Some(true)
        || (usage.is_none() && payload.get(event::DAMAGED).is_some());
    let consumed = payload.get("consumed").and_then(Value::as_array).is_some_and(|ids| !ids.is_empty());
    (consumed || usage.is_some() || unknown).then_some((usage, !unknown))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Value {
        crate::core::json::parse(text, 64).unwrap()
    }

    /// Issue 66, point 5: a host's unknown usage field is an error naming the right one.
    #[test]
    fn a_hosts_unknown_usage_field_is_refused_with_the_right_name() {
        let e = Usage::from_host(&v(r#"{"input_tokens":5,"outputTokens":1}"#), "usage").unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::InvalidArgument);
        assert!(e.message.starts_with("usage has an unknown field \"input_tokens\"; did you mean inputTokens?"), "{e}");
        let e = Usage::from_host(&v(r#"{"inputTokens":5,"outputTokens":1,"totalTokens":6}"#), "usage").unwrap_err();
        assert!(e.message.contains("\"totalTokens\""), "{e}");
        let u = Usage::from_host(&v(r#"{"inputTokens":5,"outputTokens":1,"cost":2}"#), "usage").unwrap();
        assert_eq!((u.input_tokens, u.output_tokens, u.cost), (5, 1, Some(2)));
    }

    /// Issue 66, point 5: sums stop at 2^53 - 1, so no total reaches JS as an imprecise number.
    #[test]
    fn totals_stop_at_the_largest_safe_integer() {
        let max = MAX_SAFE_INTEGER as u64;
        let big = Usage { input_tokens: max - 1, output_tokens: 3, cost: Some(max), ..Usage::default() };
        let mut sum = Totals::default();
        for _ in 0..3 {
            sum.add_turn(Some(&big), true);
        }
        assert_eq!((sum.usage.input_tokens, sum.usage.output_tokens, sum.usage.cost), (max, 9, Some(max)));
        assert_eq!(sum.usage.tokens(), max);
        let value = sum.to_value();
        assert_eq!(value.get("inputTokens").and_then(Value::as_u64), Some(max));
    }

    #[test]
    fn usage_reads_every_field_and_refuses_bad_ones_by_name() {
        let u = Usage::from_value(&v(r#"{"inputTokens":10,"outputTokens":5,"cacheReadTokens":2,"cost":7}"#), "usage")
            .unwrap();
        assert_eq!((u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cost), (10, 5, Some(2), Some(7)));
        assert_eq!(u.reasoning_tokens, None);
        assert_eq!(Usage::from_value(&u.to_value(), "usage").unwrap(), u);
        for (text, message) in [
            (r#"{"inputTokens":-1}"#, "usage.inputTokens must be a non-negative integer of at most 2^53 - 1, not -1"),
            (
                r#"{"outputTokens":1.5}"#,
                "usage.outputTokens must be a non-negative integer of at most 2^53 - 1, not 1.5",
            ),
            (
                r#"{"cost":1e16}"#,
                "usage.cost must be a non-negative integer of at most 2^53 - 1, not 10000000000000000",
            ),
            (r#"{"reasoningTokens":"3"}"#, "usage.reasoningTokens must be a non-negative integer, not a string"),
            (r#"[1]"#, "usage must be an object {inputTokens, outputTokens, ...}, not an array"),
        ] {
            let e = Usage::from_value(&v(text), "usage").unwrap_err();
            assert_eq!((e.code, e.message.as_str()), (crate::ErrorCode::InvalidArgument, message), "{text}");
        }
    }

    #[test]
    fn sums_keep_optional_fields_once_either_side_has_them() {
        let mut a = Usage { input_tokens: 1, output_tokens: 2, cost: Some(3), ..Usage::default() };
        a.add(&Usage { input_tokens: 10, output_tokens: 20, cache_read_tokens: Some(4), ..Usage::default() });
        assert_eq!(a, Usage { input_tokens: 11, output_tokens: 22, cache_read_tokens: Some(4), cost: Some(3), ..a });
        let mut t = Totals::default();
        t.add_turn(Some(&a), true);
        t.add_turn(None, false);
        assert_eq!((t.turns, t.complete, t.usage.tokens()), (2, false, 33));
    }

    #[test]
    fn a_log_folds_its_own_turns_its_externals_and_an_open_turn() {
        let e = |seq, kind: &str, payload: &str| SessionEvent::new(seq, kind, v(payload));
        let log = [
            e(0, event::SESSION_START, r#"{}"#),
            e(1, event::TURN_START, r#"{"input":["m1"]}"#),
            e(2, event::TURN_END, r#"{"consumed":["m1"],"usage":{"inputTokens":100,"outputTokens":20}}"#),
            e(3, event::TURN_START, r#"{"input":[]}"#),
            e(4, event::TURN_END, r#"{"consumed":[]}"#),
            e(5, event::SUBAGENT_USAGE, r#"{"childId":"run-1","usage":{"inputTokens":7,"outputTokens":3}}"#),
            e(6, event::TURN_START, r#"{"input":["m2"]}"#),
        ];
        let folded = LogUsage::of(&log);
        assert_eq!((folded.own.turns, folded.own.usage.tokens(), folded.own.complete), (1, 120, true));
        assert!(folded.open_turn, "the last turn started and has not ended");
        assert_eq!(
            folded.externals,
            [("run-1".to_owned(), Usage { input_tokens: 7, output_tokens: 3, ..Usage::default() })]
        );
        let lost = [e(0, event::TURN_END, r#"{"consumed":["m1"],"usageUnknown":true}"#)];
        assert_eq!(LogUsage::of(&lost).own, Totals { turns: 1, complete: false, ..Totals::default() });
        assert!(!LogUsage::of(&log[..5]).open_turn);
    }
}
