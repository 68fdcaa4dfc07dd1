//! One member's lifecycle, and one tree's admission, as sans-I/O state machines.
//!
//! [`Life`] holds what decides a resident member's next move. Every
//! transition is a synchronous `&mut self` call; the ones that can lead
//! somewhere return a [`Step`] saying what the runtime must do (run a turn,
//! begin settlement). Completions of that work come back as calls too, and a
//! turn's completion is tagged with its turn id, so a late or duplicated one
//! (a host that ignored an abort, a stale task) changes nothing. The async
//! runtime is only the driver: it borrows a `Life` for one transition at a
//! time, never across an `.await`, and does the store, provider and host I/O
//! in between. [`Tree`] is the same for one tree: its slots (a start or
//! resume reserves one, and it becomes live or is given back), its budgets'
//! ledger, and the line of turns waiting for a quiet moment.
//!
//! Every field of both is private to this module, so the tables below are
//! all the ways their state changes. A member's state is its [`Phase`], its
//! [`Halt`] (why pending input does not run), its [`Input`] (open, or closed
//! by a captured result), its running turn and that turn's wait.
//!
//! | state | input (method) | next |
//! |---|---|---|
//! | live, idle, `Ready` | [`Life::next`] with input, input open, its budgets open | running: `Step::Run` |
//! | live, idle | [`Life::next`] with input, a budget's room reserved by running turns | `BudgetRoom`, busy: the end of one kicks it |
//! | `BudgetRoom` | [`Life::next`] | its budgets looked at anew (as from `Ready`) |
//! | live, idle | [`Life::next`] with input, a budget on its chain spent | `Exhausted` (parked; in the log for a local member, which then settles around it): `Step::Exhausted` |
//! | `Exhausted` | [`Life::write_ended`] with a message | still exhausted (parked): only [`Life::unexhaust`] (a budget raised) wakes it |
//! | `Exhausted(Unparked)` (resident after a spent stop) | [`Life::next`] with input / [`Life::write_ended`] with a message | `Step::Exhausted` recorded again / parked |
//! | `Exhausted` | [`Life::exhausted_recorded`] | its stop's result kept (a child's); the waiting hosts of its pending input answered |
//! | `Exhausted` | [`Life::unexhaust`] | `Ready` |
//! | live, idle | [`Life::next`] with nothing it would run, no write in flight, no hold, no live child, no start in flight (local members only) | `Step::Settle` |
//! | running | [`Life::turn_ended`] (its turn id) | idle; a structured capture makes input `Closed`; a wait of the turn ends |
//! | running | [`Life::turn_unseen`]: stopped before the host saw it | idle, its input pending again |
//! | running | [`Life::take_steered`] (its turn id) | running, steered messages handed over |
//! | running | [`Life::begin_wait`] / [`Life::line_up`] / [`Life::wake_for_quiet`] / [`Life::end_wait`] | waiting (in its tree's line for a quiet moment while it has a wake), then running |
//! | live | [`Life::interrupt`] | `Interrupted` (`Exhausted(Parked)` when exhausted): pending input waits for a waking send |
//! | `Interrupted`, `InLog` | [`Life::write_ended`] with an accepted message | `Ready` (a waking send) |
//! | new | [`Life::adopt`] (what the log says) | `Ready`, `InLog` (a local member's parked input), `Interrupted` (a root's), or `Exhausted` |
//! | `InLog` | [`Life::next`], nothing else keeping it | `Step::Settle` (the input stays in the log) |
//! | live | [`Life::found_in_log`] | its input grows (not a waking send) |
//! | live | [`Life::begin_write`] / [`Life::write_ended`] | a write in flight keeps it from settling; `Closed` input or a full queue refuses |
//! | live | [`Life::hold`] / [`Life::release`], [`Life::child_joined`] / [`Life::child_left`] | kept resident while held or owning children |
//! | live | [`Life::moved`] | its directory moved (already in its log) |
//! | external, live | [`Life::run_ended`] | its run's result kept (the first one known) |
//! | live | [`Life::close`] | closing (the driver stops its turn or run and tears down) |
//! | closing | [`Life::take_last`], [`Life::left`] | gone |
//!
//! | tree state | input (method) | next |
//! |---|---|---|
//! | open | [`Tree::reserve`] / [`Tree::admit`] (a spawn reserved on its chain too) | a slot reserved ([`Tree::full`] refuses the next at capacity) |
//! | slot reserved | [`Tree::unreserve`] / [`Tree::admitted`] | live, or given back; the spawn counted when its entry committed; the child's budget opens |
//! | live slot | [`Tree::left`] | given back |
//! | open | [`Tree::drain`] | draining until the root closes: admits nothing |
//! | open | [`Tree::begin_recovery`] / [`Tree::end_recovery`] | not quiet while the open-time scan runs |
//! | any | [`Tree::take_changed`] / [`Tree::close`] | waiters on its work woken |
//! | budgets | [`Tree::gate`], [`Tree::reserve_turn`], [`Tree::turn_spent`], [`Tree::wait_for_room`] | a turn's room reserved, spent, or waited for |
//! | budgets | [`Tree::add_spent`], [`Tree::begin_audit`] / [`Tree::end_audit`], [`Tree::set_budget`] | spending outside a turn; a budget set from a read of its logs |
//! | line | [`Tree::mint_ticket`], [`Tree::line_up`], [`Tree::next_in_line`], [`Tree::leave_line`] | turns waiting for a quiet moment, longest first |

use super::message::{InboxMessage, Scheduling};
use crate::core::budget::{self, Allowance, Budget, Exhausted, Gate, Ledger, Spent};
use crate::core::exec::Deferred;
use crate::core::result::SubagentResult;
use crate::core::schema::OutputSchema;
use crate::core::signal::Signal;
use std::collections::VecDeque;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Live,
    Closing,
    Gone,
}

/// What kind of member a `Life` belongs to: only local children settle by
/// themselves, and an external run never takes turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lane {
    Root,
    Local,
    External,
}

/// The running turn of a member.
struct TurnSlot {
    /// Unique per turn: completions and steer takes for other turns are ignored.
    id: u64,
    signal: Signal,
    /// Set once the turn's end is recorded (teardown and close wait for it).
    done: Deferred<()>,
    /// Ids of the messages this turn consumed (its input and steered messages taken).
    consumed: Vec<String>,
}

/// What a turn blocked in `Runtime::wait_for_input` waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// A steered message (or an interrupt).
    Steer,
    /// An interrupt only: steered messages stay pending.
    Interrupt,
}

/// A turn [`Life::next`] has put in place, for the driver to run.
pub(crate) struct TurnPlan {
    pub id: u64,
    pub input: Vec<InboxMessage>,
    pub signal: Signal,
    /// The member's first turn (it gets the return guidance).
    pub first: bool,
    pub schema: Option<Rc<OutputSchema>>,
}

/// What the driver does after [`Life::next`].
pub(crate) enum Step {
    Run(TurnPlan),
    /// A budget on its chain is spent: its input is parked, and the driver
    /// records the stop (`budget-exhausted`).
    Exhausted,
    /// Begin settlement (the member is still live until the driver closes it).
    Settle,
    Idle,
}

/// Why a write into the inbox is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A structured result was captured.
    InputClosed,
    /// The member is closing or gone.
    NotLive,
    /// Its queue would pass the cap: the bytes it holds already.
    Full(usize),
}

/// The bytes a message holds in a queue (its content, as limits measure it).
pub(crate) fn queued_size(message: &InboxMessage) -> usize {
    crate::core::limits::json_size(&message.content)
}

/// Why a live member's pending input does not run now. With none of these
/// (`Ready`), input runs as soon as it is idle. Each variant says what wakes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Halt {
    /// Nothing holds it.
    Ready,
    /// Its input waits for budget room that running turns reserved: it
    /// cannot act until one ends (a turn waiting for a quiet tree may go on).
    /// Lasts until its next move, which looks at the budgets again.
    BudgetRoom,
    /// An interrupt parked its input: a waking send (an accepted message) runs it.
    Interrupted,
    /// Input found parked in its log at resume: durable there, so a local
    /// member may settle around it. A waking send runs it.
    InLog,
    /// A budget on its chain is spent: messages do not wake it; only a
    /// raised budget does ([`Life::unexhaust`]).
    Exhausted(Parking),
}

/// Where an exhausted member's input waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parking {
    /// Not parked yet: the log said the budget is spent when it became
    /// resident (a resume, a root reopened to rerun). Its next move with
    /// input records the stop again and parks it; a message parks it.
    Unparked,
    /// Parked while resident (a root's or an external member's input, or
    /// an interrupted one's).
    Parked,
    /// Parked and durable in the log: a local member settles around it.
    ParkedInLog,
}

impl Halt {
    /// Pending input is parked: it neither runs nor keeps the member busy.
    fn parks(self) -> bool {
        matches!(self, Halt::Interrupted | Halt::InLog | Halt::Exhausted(Parking::Parked | Parking::ParkedInLog))
    }

    /// Parked input is durable in the log: the member may settle around it.
    fn in_log(self) -> bool {
        matches!(self, Halt::InLog | Halt::Exhausted(Parking::ParkedInLog))
    }
}

/// Whether a member still takes input: a captured structured result closes it for good.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Input {
    Open,
    /// A structured result was captured: writes are refused, and pending
    /// input never runs (the member settles around it).
    Closed,
}

/// A turn blocked in `Runtime::wait_for_input`.
struct Waiter {
    wait: Wait,
    /// Only this wait's own end clears it.
    ticket: u64,
    /// Its wake while it is in its tree's line for a quiet moment; taken
    /// when it is woken for one.
    wake: Option<Deferred<()>>,
}

/// One member's lifecycle. Every field is private: a driver changes it only
/// through the transitions below, each a row of the table in the module doc.
pub(crate) struct Life {
    phase: Phase,
    inbox: VecDeque<InboxMessage>,
    /// Bytes of input held: the inbox's content and acceptances in flight
    /// (bounded by `memberQueueBytes`; a turn's input leaves it when the turn takes it).
    queued: usize,
    turn: Option<TurnSlot>,
    halt: Halt,
    input: Input,
    output_schema: Option<Rc<OutputSchema>>,
    /// The latest turn's (or run's) result, kept through teardown.
    last: Option<crate::Result<SubagentResult>>,
    turns: u32,
    live_children: usize,
    /// Durable writes in flight the member must not settle around (message
    /// acceptances, a lost turn's record); teardown waits for them too.
    writes: usize,
    /// Host holds from `reopen`: a held member stays resident while idle.
    holds: usize,
    /// The running turn's wait in `Runtime::wait_for_input`, if it waits.
    waiter: Option<Waiter>,
    /// The directory a turn moved it to in this residency (`session/cwd`,
    /// already in its log); `None`: the one it became resident with.
    cwd: Option<String>,
}

/// What a member's log says when it becomes resident ([`Life::adopt`]).
pub(crate) struct Adopted {
    /// Input accepted and never consumed, in log order.
    pub pending: Vec<InboxMessage>,
    /// An interrupt had parked that input.
    pub parked: bool,
    /// Its last stop was a spent budget, and a budget on its chain is still spent.
    pub spent: bool,
    /// The log records a turn its host was handed: the next is not `first`.
    pub ran: bool,
    /// The result it resumes with (a lost turn's, when it is not run again).
    pub last: Option<SubagentResult>,
}

impl Life {
    pub fn new(output_schema: Option<Rc<OutputSchema>>) -> Life {
        Life {
            phase: Phase::Live,
            inbox: VecDeque::new(),
            queued: 0,
            turn: None,
            halt: Halt::Ready,
            input: Input::Open,
            output_schema,
            last: None,
            turns: 0,
            live_children: 0,
            writes: 0,
            holds: 0,
            waiter: None,
            cwd: None,
        }
    }

    /// The member's next move. `starting`: a child start under it is in
    /// flight (it owns that child once it publishes). `budget`: whether its
    /// budgets let a turn run now. `turn_id` mints the id of a turn this
    /// puts in place.
    pub fn next(&mut self, lane: Lane, starting: bool, budget: &Gate, turn_id: impl FnOnce() -> u64) -> Step {
        if self.halt == Halt::BudgetRoom {
            self.halt = Halt::Ready;
        }
        let may_run = self.phase == Phase::Live
            && self.turn.is_none()
            && !self.halt.parks()
            && self.input == Input::Open
            && lane != Lane::External;
        if may_run && !self.inbox.is_empty() {
            match budget {
                Gate::Wait => {
                    self.halt = Halt::BudgetRoom;
                    return Step::Idle;
                }
                Gate::Spent(_) => {
                    // Durable in the log: a local member may settle around it.
                    self.halt =
                        Halt::Exhausted(if lane == Lane::Local { Parking::ParkedInLog } else { Parking::Parked });
                    return Step::Exhausted;
                }
                Gate::Free | Gate::Open(_) => self.halt = Halt::Ready,
            }
            let input: Vec<InboxMessage> = self.inbox.drain(..).collect();
            self.queued = self.queued.saturating_sub(input.iter().map(queued_size).sum());
            let signal = Signal::new();
            let first = self.turns == 0;
            self.turns += 1;
            let id = turn_id();
            self.turn = Some(TurnSlot {
                id,
                signal: signal.clone(),
                done: Deferred::new(),
                consumed: input.iter().map(|m| m.id.clone()).collect(),
            });
            return Step::Run(TurnPlan { id, input, signal, first, schema: self.output_schema.clone() });
        }
        if lane == Lane::Local && !starting && self.settles() {
            Step::Settle
        } else {
            Step::Idle
        }
    }

    /// Idle with nothing that keeps it resident: no turn, no write in flight,
    /// no hold, no live child, and no input it would run (parked input from
    /// the log stays durable there).
    fn settles(&self) -> bool {
        self.phase == Phase::Live
            && self.turn.is_none()
            && self.writes == 0
            && self.holds == 0
            && self.live_children == 0
            && (self.inbox.is_empty() || self.input == Input::Closed || self.halt.in_log())
    }

    /// Doing work now: a turn or run in flight, input that will start one, or teardown.
    pub fn is_busy(&self, lane: Lane) -> bool {
        match self.phase {
            Phase::Gone => false,
            Phase::Closing => true,
            Phase::Live if lane == Lane::External => true,
            Phase::Live => self.turn.is_some() || self.has_input_to_run(),
        }
    }

    /// Pending input that is neither parked nor closed: its next move runs it
    /// (or records a spent budget's stop).
    pub fn has_input_to_run(&self) -> bool {
        !self.halt.parks() && self.input == Input::Open && !self.inbox.is_empty()
    }

    /// Pending input that is parked (a listing shows the member `parked`).
    pub fn has_parked_input(&self) -> bool {
        self.halt.parks() && !self.inbox.is_empty()
    }

    /// The ids of its pending input, in order.
    pub fn pending_ids(&self) -> Vec<String> {
        self.inbox.iter().map(|m| m.id.clone()).collect()
    }

    /// A write into the inbox begins (an acceptance of `bytes`, reserved in
    /// the queue): refused once input is closed, the member is no longer
    /// live, or the queue would pass `cap` (none for a notice, which always lands).
    pub fn begin_write(&mut self, bytes: usize, cap: Option<usize>) -> Result<(), Refusal> {
        if self.input == Input::Closed {
            return Err(Refusal::InputClosed);
        }
        if self.phase != Phase::Live {
            return Err(Refusal::NotLive);
        }
        if cap.is_some_and(|cap| self.queued.saturating_add(bytes) > cap) {
            return Err(Refusal::Full(self.queued));
        }
        self.queued = self.queued.saturating_add(bytes);
        self.writes += 1;
        Ok(())
    }

    /// A write of the member's own record begins (a lost turn's end, a
    /// spent budget's stop): it must land, whatever the phase.
    pub fn begin_record(&mut self) {
        self.writes += 1;
    }

    /// A write ended; `accepted` is a message that became durable, `reserved`
    /// what its `begin_write` reserved. Returns whether it joined the inbox
    /// (keeping its bytes queued; else it is pending in the log for the next
    /// resume). An accepted message wakes parked input, unless a budget is spent.
    pub fn write_ended(&mut self, accepted: Option<InboxMessage>, reserved: usize) -> bool {
        self.writes = self.writes.saturating_sub(1);
        match accepted {
            Some(message) if self.phase == Phase::Live => {
                // Held as measured now (a reservation is released either way).
                self.queued = self.queued.saturating_sub(reserved).saturating_add(queued_size(&message));
                self.inbox.push_back(message);
                self.halt = match self.halt {
                    Halt::Interrupted | Halt::InLog => Halt::Ready,
                    Halt::Exhausted(Parking::Unparked) => Halt::Exhausted(Parking::Parked),
                    other => other,
                };
                true
            }
            _ => {
                self.queued = self.queued.saturating_sub(reserved);
                false
            }
        }
    }

    /// Messages found durable in its log that their writer was told failed
    /// (a write whose outcome the store did not tell): they are input, held
    /// in the queue like any other. Not a waking send: nobody was told it landed.
    pub fn found_in_log(&mut self, messages: impl IntoIterator<Item = InboxMessage>) {
        for message in messages {
            self.queued = self.queued.saturating_add(queued_size(&message));
            self.inbox.push_back(message);
        }
    }

    /// Interrupt: parks pending input and returns the signal of the running
    /// turn (or of the run, `run_signal`, for an external member) to abort.
    pub fn interrupt(&mut self, run_signal: Option<&Signal>) -> Option<Signal> {
        self.halt = match self.halt {
            Halt::Exhausted(_) => Halt::Exhausted(Parking::Parked),
            _ => Halt::Interrupted,
        };
        run_signal.cloned().or_else(|| self.turn.as_ref().map(|t| t.signal.clone()))
    }

    /// Becomes resident with what its log says. A local member's parked
    /// input is durable in the log (it may settle around it); a root's is
    /// parked as after an interrupt (a root never settles by itself).
    pub fn adopt(&mut self, lane: Lane, log: Adopted) {
        for message in log.pending {
            self.queued = self.queued.saturating_add(queued_size(&message));
            self.inbox.push_back(message);
        }
        self.turns = u32::from(log.ran);
        if let Some(last) = log.last {
            self.last = Some(Ok(last));
        }
        let parked = log.parked && !self.inbox.is_empty();
        let in_log = lane == Lane::Local;
        self.halt = match (log.spent, parked) {
            (false, false) => Halt::Ready,
            (false, true) if in_log => Halt::InLog,
            (false, true) => Halt::Interrupted,
            (true, false) => Halt::Exhausted(Parking::Unparked),
            (true, true) if in_log => Halt::Exhausted(Parking::ParkedInLog),
            (true, true) => Halt::Exhausted(Parking::Parked),
        };
    }

    /// A budget on its chain was raised: parked input runs again (the next
    /// [`Life::next`] checks the budgets anew). Returns whether it was exhausted.
    pub fn unexhaust(&mut self) -> bool {
        if !matches!(self.halt, Halt::Exhausted(_)) {
            return false;
        }
        self.halt = Halt::Ready;
        true
    }

    /// A spent budget's stop (`budget-exhausted`) was recorded: `result`
    /// takes the last output it gave, a child keeps it as its last result
    /// (`keep`), and the ids of its pending input are returned (their
    /// waiting hosts get this result).
    pub fn exhausted_recorded(&mut self, result: &mut SubagentResult, keep: bool) -> Vec<String> {
        self.writes = self.writes.saturating_sub(1);
        if let Some(Ok(last)) = &self.last {
            result.output = last.output.clone();
        }
        if keep {
            self.last = Some(Ok(result.clone()));
        }
        self.pending_ids()
    }

    /// Turn `id` was stopped before the host was handed it: its input was
    /// never delivered, so it is pending again, first in line.
    pub fn turn_unseen(&mut self, id: u64, input: Vec<InboxMessage>) {
        let Some(slot) = self.turn.as_mut().filter(|t| t.id == id) else { return };
        slot.consumed.clear();
        for message in input.into_iter().rev() {
            self.queued = self.queued.saturating_add(queued_size(&message));
            self.inbox.push_front(message);
        }
        self.turns = self.turns.saturating_sub(1);
    }

    /// The ids turn `id` consumed so far (its input and steered messages).
    pub fn consumed(&self, id: u64) -> Vec<String> {
        self.turn.as_ref().filter(|t| t.id == id).map(|t| t.consumed.clone()).unwrap_or_default()
    }

    /// A turn is running.
    pub fn in_turn(&self) -> bool {
        self.turn.is_some()
    }

    /// Turn `id` is the one running, and the member is live.
    pub fn runs(&self, id: u64) -> bool {
        self.phase == Phase::Live && self.turn.as_ref().is_some_and(|t| t.id == id)
    }

    /// The running turn's signal (`Some(id)`: only if it is turn `id`).
    pub fn turn_signal(&self, id: Option<u64>) -> Option<Signal> {
        self.turn.as_ref().filter(|t| id.is_none_or(|id| t.id == id)).map(|t| t.signal.clone())
    }

    /// What fires once the running turn's end is recorded.
    pub fn turn_done(&self) -> Option<Deferred<()>> {
        self.turn.as_ref().map(|t| t.done.clone())
    }

    /// Turn `id` ended and its end was written (`last` is the result, or the
    /// failure to write it); `captured`: it produced a valid structured
    /// result, which closes input. Returns the turn's `done` to fire, or
    /// `None` for a stale or repeated completion, which changes nothing.
    pub fn turn_ended(&mut self, id: u64, last: crate::Result<SubagentResult>, captured: bool) -> Option<Deferred<()>> {
        if self.turn.as_ref().is_none_or(|t| t.id != id) {
            return None;
        }
        if captured {
            self.input = Input::Closed;
        }
        self.last = Some(last);
        // A wait of this turn ends with it (a host may have stopped polling it).
        if let Some(wake) = self.waiter.take().and_then(|w| w.wake) {
            wake.set(());
        }
        self.turn.take().map(|t| t.done)
    }

    /// An external run's result is known (its watch saw it, or teardown
    /// waited for it): the member's last result, the same value both ways.
    pub fn run_ended(&mut self, outcome: crate::Result<SubagentResult>) {
        self.last.get_or_insert(outcome);
    }

    /// Its last result, taken for the notice teardown sends (`None`: it ran nothing this residency).
    pub fn take_last(&mut self) -> Option<crate::Result<SubagentResult>> {
        self.last.take()
    }

    /// Removes and returns the steered messages for turn `id` (none for
    /// another turn: a host that kept running after an abort cannot take
    /// messages meant for the next one).
    pub fn take_steered(&mut self, id: u64) -> Vec<InboxMessage> {
        if self.turn.as_ref().is_none_or(|t| t.id != id) {
            return Vec::new();
        }
        let (steer, rest): (VecDeque<_>, VecDeque<_>) =
            self.inbox.drain(..).partition(|m| m.scheduling == Scheduling::Steer);
        self.inbox = rest;
        self.queued = self.queued.saturating_sub(steer.iter().map(queued_size).sum());
        if let Some(turn) = self.turn.as_mut() {
            turn.consumed.extend(steer.iter().map(|m| m.id.clone()));
        }
        steer.into()
    }

    /// Whether a steered message waits to be taken.
    pub fn steer_pending(&self) -> bool {
        self.inbox.iter().any(|m| m.scheduling == Scheduling::Steer)
    }

    /// The running turn begins waiting (`ticket` from its tree).
    pub fn begin_wait(&mut self, wait: Wait, ticket: u64) {
        self.waiter = Some(Waiter { wait, ticket, wake: None });
    }

    /// What the running turn waits for, if it waits.
    pub fn waits_for(&self) -> Option<Wait> {
        self.waiter.as_ref().map(|w| w.wait)
    }

    /// The wait `ticket` goes in line for a quiet moment with `wake`.
    /// Returns whether it was in line already (its tree's line keeps its
    /// place), or `None` when `ticket` is no longer this member's wait.
    pub fn line_up(&mut self, ticket: u64, wake: Deferred<()>) -> Option<bool> {
        let waiter = self.waiter.as_mut().filter(|w| w.ticket == ticket)?;
        Some(waiter.wake.replace(wake).is_some())
    }

    /// Wait `ticket` is woken for a quiet moment: its wake, taken out of
    /// line (`None` if it no longer waits in line with that ticket).
    pub fn wake_for_quiet(&mut self, ticket: u64) -> Option<Deferred<()>> {
        self.waiter.as_mut().filter(|w| w.ticket == ticket)?.wake.take()
    }

    /// The wake of a wait for a steer, when a steered message is pending.
    pub fn steer_wake(&self) -> Option<Deferred<()>> {
        let waiter = self.waiter.as_ref().filter(|w| w.wait == Wait::Steer && self.steer_pending())?;
        waiter.wake.clone()
    }

    /// Wait `ticket` ended by itself: `None` if it is not this member's wait
    /// (its turn's end cleared it already), else whether it was still in
    /// line (the driver takes it out of its tree's line).
    pub fn end_wait(&mut self, ticket: u64) -> Option<bool> {
        if self.waiter.as_ref().is_none_or(|w| w.ticket != ticket) {
            return None;
        }
        self.waiter.take().map(|w| w.wake.is_some())
    }

    /// Input waits for budget room running turns reserved ([`Halt::BudgetRoom`]).
    pub fn waits_for_budget(&self) -> bool {
        self.halt == Halt::BudgetRoom
    }

    pub fn input_closed(&self) -> bool {
        self.input == Input::Closed
    }

    /// Bytes of input it holds.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// A durable write is in flight.
    pub fn writing(&self) -> bool {
        self.writes > 0
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// A turn moved it to `cwd` (already in its log).
    pub fn moved(&mut self, cwd: String) {
        self.cwd = Some(cwd);
    }

    /// The directory a turn moved it to, if one did.
    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    pub fn hold(&mut self) {
        self.holds += 1;
    }

    pub fn release(&mut self) {
        self.holds = self.holds.saturating_sub(1);
    }

    pub fn child_joined(&mut self) {
        self.live_children += 1;
    }

    pub fn child_left(&mut self) {
        self.live_children = self.live_children.saturating_sub(1);
    }

    /// Begins settlement once: `Some` with the running turn's signal, if any
    /// (the driver aborts it for a dispose or drain); `None` when it was not
    /// live, so a second close changes nothing.
    pub fn close(&mut self) -> Option<Option<Signal>> {
        if self.phase != Phase::Live {
            return None;
        }
        self.phase = Phase::Closing;
        Some(self.turn.as_ref().map(|t| t.signal.clone()))
    }

    /// Left residency.
    pub fn left(&mut self) {
        self.phase = Phase::Gone;
    }

    /// Its state in one line (for invariant reports).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn describe(&self) -> String {
        format!(
            "phase {:?}, inbox {}, turn {}, halt {:?}, input {:?}, writes {}, holds {}, live children {}, last {}, waiting {:?}",
            self.phase,
            self.inbox.len(),
            self.turn.is_some(),
            self.halt,
            self.input,
            self.writes,
            self.holds,
            self.live_children,
            self.last.is_some(),
            self.waits_for(),
        )
    }
}

/// One tree's admission state: its slots, whether it still admits, its
/// budgets and the turns waiting for a quiet moment. Every field is private:
/// a driver changes it only through the transitions below, each a row of the
/// tree table in the module doc.
#[derive(Default)]
pub(crate) struct Tree {
    /// Admission closed (a drain) until the root closes.
    draining: bool,
    /// Resident children (the root excluded).
    live: usize,
    /// Admitted starts and resumes not yet resident.
    reserved: usize,
    /// The open-time crash recovery is still reading or resuming members.
    recovering: bool,
    /// Fired (and replaced) whenever tree work changes.
    changed: Deferred<()>,
    /// The tree's budgets: what each owner's subtree spent and reserved.
    budgets: Ledger,
    /// The member a quiet check last found at work, checked first next time:
    /// while the tree works, every waiter woken by a change finds a witness
    /// at once instead of scanning every member (n waiters over n members
    /// made each change cost n * n). Only a hint: "quiet" still scans.
    working: Option<String>,
    /// Turns blocked in `Runtime::wait_for_input`, longest waiting first, as
    /// (Session id, ticket): a quiet moment wakes only the first (once it
    /// goes on, its turn works again and the tree is not quiet for the
    /// rest), so a change costs one wake, not one per waiter. An entry
    /// whose member no longer waits with that ticket is dropped when reached.
    quiet_waiters: VecDeque<(String, u64)>,
    next_ticket: u64,
}

impl Tree {
    /// An open tree over the budgets its root's log keeps.
    pub fn new(budgets: Ledger) -> Tree {
        Tree { budgets, ..Tree::default() }
    }

    /// Whether every slot is live or reserved.
    pub fn full(&self, capacity: usize) -> bool {
        self.live + self.reserved >= capacity
    }

    /// A start or resume takes a slot before its first await.
    pub fn reserve(&mut self) {
        self.reserved += 1;
    }

    /// The reserved slot becomes a live member (`live`) or is given back.
    pub fn unreserve(&mut self, live: bool) {
        self.reserved = self.reserved.saturating_sub(1);
        if live {
            self.live += 1;
        }
    }

    /// A start admitted under the member `chain` names: a slot and one spawn
    /// on every budget of the chain are reserved, in the synchronous step
    /// that checked both ([`Tree::full`], [`Tree::exhausted`] with spawns).
    pub fn admit(&mut self, chain: &[&str]) {
        self.reserve();
        // Cannot fail: checked in the same synchronous step.
        let _ = self.budgets.admit_spawn(chain);
    }

    /// The start [`Tree::admit`] reserved for ended: its slot becomes live
    /// (`committed`: the child's id) or is given back; its spawn counts when
    /// the catalog entry committed or may have (`counted`, at `record`), and
    /// the child's own budget, if it was given one, opens.
    pub fn admitted(
        &mut self,
        chain: &[&str],
        committed: Option<&str>,
        counted: bool,
        record: budget::Record<'_>,
        budget: Option<Budget>,
    ) {
        self.unreserve(committed.is_some());
        self.budgets.spawn_ended(chain, counted, record);
        if let (Some(child), Some(budget)) = (committed, budget) {
            self.budgets.set(child, budget, Spent::default());
        }
    }

    /// A live member left residency.
    pub fn left(&mut self) {
        self.live = self.live.saturating_sub(1);
    }

    /// Starts and resumes admitted and not yet resident.
    pub fn reserved(&self) -> usize {
        self.reserved
    }

    /// Closes admission until the root closes (a drain).
    pub fn drain(&mut self) {
        self.draining = true;
    }

    pub fn is_draining(&self) -> bool {
        self.draining
    }

    /// The open-time recovery scan begins; the tree is not quiet until it ends.
    pub fn begin_recovery(&mut self) {
        self.recovering = true;
    }

    pub fn end_recovery(&mut self) {
        self.recovering = false;
    }

    pub fn is_recovering(&self) -> bool {
        self.recovering
    }

    /// What fires at the next change of the tree's work.
    pub fn changed(&self) -> Deferred<()> {
        self.changed.clone()
    }

    /// The tree's work changed: returns the wake for the driver to fire (a
    /// new one waits for the next change).
    pub fn take_changed(&mut self) -> Deferred<()> {
        std::mem::take(&mut self.changed)
    }

    /// The root closed: whoever waits on the tree's work is woken once more
    /// (and finds the tree gone).
    pub fn close(self) {
        self.changed.set(());
    }

    /// The tree's budgets, to read (they change only through the calls below).
    pub fn ledger(&self) -> &Ledger {
        &self.budgets
    }

    /// Whether the member `chain` names may run a turn now.
    pub fn gate(&self, chain: &[&str]) -> Gate {
        if self.budgets.is_empty() {
            Gate::Free
        } else {
            self.budgets.gate(chain)
        }
    }

    /// A budget on a chain is spent ([`Ledger::exhausted`]; `spawning`:
    /// counting starts). A tree without budgets has none.
    pub fn exhausted(&self, chain: &[&str], spawning: bool) -> Option<Exhausted> {
        if self.budgets.is_empty() {
            return None;
        }
        self.budgets.exhausted(chain, spawning)
    }

    /// The tightest room left over the chain.
    pub fn remaining(&self, chain: &[&str]) -> Budget {
        self.budgets.remaining(chain)
    }

    /// Input waits for room that running turns reserved ([`Gate::Wait`]):
    /// the next end of a reserved turn kicks the members that wait.
    pub fn wait_for_room(&mut self) {
        self.budgets.wait_for_room();
    }

    /// Turn `turn` of the member `chain` names opened with `allowance`
    /// reserved on every budget of its chain (in the step the gate opened in).
    pub fn reserve_turn(&mut self, turn: u64, chain: &[&str], allowance: &Allowance) {
        self.budgets.reserve_turn(turn, chain, allowance);
    }

    /// Turn `turn` ended having spent `spent` (recorded at `record`): its
    /// chain counts it. Returns whether members wait for the room it freed.
    pub fn turn_spent(&mut self, turn: u64, chain: &[&str], spent: &Spent, record: budget::Record<'_>) -> bool {
        if self.budgets.is_empty() {
            return false;
        }
        self.budgets.end_turn(turn, chain, spent, record) && self.budgets.take_waiting()
    }

    /// Spending outside a turn (an external run's), recorded at `record`.
    pub fn add_spent(&mut self, chain: &[&str], spent: &Spent, record: budget::Record<'_>) {
        if !self.budgets.is_empty() {
            self.budgets.add(chain, spent, record);
        }
    }

    /// A budget of `owner` is being set from a read of its logs
    /// ([`Ledger::begin_audit`]).
    pub fn begin_audit(&mut self, owner: &str) -> u64 {
        self.budgets.begin_audit(owner)
    }

    pub fn end_audit(&mut self, token: u64) -> Vec<(Option<(String, u64)>, Spent)> {
        self.budgets.end_audit(token)
    }

    /// `owner`'s budget is set (`Some`, counting from `spent`) or cleared.
    pub fn set_budget(&mut self, owner: &str, budget: Option<Budget>, spent: Spent) {
        match budget {
            Some(b) => self.budgets.set(owner, b, spent),
            None => self.budgets.clear(owner),
        }
    }

    /// A fresh ticket for a turn's wait.
    pub fn mint_ticket(&mut self) -> u64 {
        self.next_ticket += 1;
        self.next_ticket
    }

    /// A wait joins the line for a quiet moment: at the back when new, at
    /// the front when it was woken for a moment that passed.
    pub fn line_up(&mut self, session_id: &str, ticket: u64, first: bool) {
        let entry = (session_id.to_owned(), ticket);
        if first {
            self.quiet_waiters.push_back(entry);
        } else {
            self.quiet_waiters.push_front(entry);
        }
    }

    /// Wait `ticket` left the line without being woken for a quiet moment.
    pub fn leave_line(&mut self, ticket: u64) {
        self.quiet_waiters.retain(|&(_, t)| t != ticket);
    }

    /// The wait first in line, taken out of it.
    pub fn next_in_line(&mut self) -> Option<(String, u64)> {
        self.quiet_waiters.pop_front()
    }

    pub fn has_waiters(&self) -> bool {
        !self.quiet_waiters.is_empty()
    }

    /// The member last found at work, if any (a hint).
    pub fn working_hint(&self) -> Option<&str> {
        self.working.as_deref()
    }

    pub fn remember_working(&mut self, id: Option<String>) {
        self.working = id;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::Value;
    use crate::core::result::StopReason;

    fn message(id: &str, scheduling: Scheduling) -> InboxMessage {
        InboxMessage {
            id: id.into(),
            source: super::super::message::MessageSource::User,
            content: Value::Array(vec![]),
            scheduling,
            meta: Default::default(),
        }
    }

    fn adopted(pending: Vec<InboxMessage>, parked: bool, spent: bool) -> Adopted {
        Adopted { pending, parked, spent, ran: false, last: None }
    }

    fn ids() -> impl FnMut() -> u64 {
        let mut next = 0;
        move || {
            next += 1;
            next
        }
    }

    fn run(life: &mut Life, mint: &mut impl FnMut() -> u64) -> TurnPlan {
        match life.next(Lane::Local, false, &Gate::Free, mint) {
            Step::Run(plan) => plan,
            _ => panic!("expected a turn"),
        }
    }

    fn settles(life: &mut Life) -> bool {
        matches!(life.next(Lane::Local, false, &Gate::Free, || unreachable!("no turn")), Step::Settle)
    }

    fn accept(life: &mut Life, id: &str) {
        life.begin_write(0, None).unwrap();
        assert!(life.write_ended(Some(message(id, Scheduling::Queue)), 0));
    }

    #[test]
    fn a_tree_slot_is_reserved_then_live_or_given_back() {
        let mut tree = Tree::default();
        tree.reserve();
        assert!(tree.full(1), "a reserved slot counts against capacity");
        tree.unreserve(false);
        assert!(!tree.full(1));
        tree.reserve();
        tree.unreserve(true);
        assert!(tree.full(1) && tree.reserved == 0);
        tree.left();
        tree.left(); // a repeated leave cannot underflow
        assert_eq!(tree.live, 0);
    }

    #[test]
    fn input_runs_a_turn_and_an_idle_member_with_nothing_left_settles() {
        let (mut life, mut mint) = (Life::new(None), ids());
        accept(&mut life, "m1");
        let plan = run(&mut life, &mut mint);
        assert!(plan.first);
        assert_eq!(plan.input.len(), 1);
        assert!(matches!(life.next(Lane::Local, false, &Gate::Free, &mut mint), Step::Idle), "one turn at a time");
        assert!(life.turn_ended(plan.id, Ok(SubagentResult::new(StopReason::Completed)), false).is_some());
        assert!(settles(&mut life));
    }

    #[test]
    fn a_late_or_repeated_turn_completion_changes_nothing() {
        let (mut life, mut mint) = (Life::new(None), ids());
        accept(&mut life, "m1");
        let first = run(&mut life, &mut mint);
        assert!(life.turn_ended(first.id, Ok(SubagentResult::new(StopReason::Completed)), false).is_some());
        accept(&mut life, "m2");
        let second = run(&mut life, &mut mint);
        assert!(life.turn_ended(first.id, Ok(SubagentResult::new(StopReason::Error)), false).is_none(), "stale");
        assert!(life.take_steered(first.id).is_empty(), "a stale turn takes nothing");
        assert!(life.turn.is_some(), "the second turn still runs");
        assert!(life.turn_ended(second.id, Ok(SubagentResult::new(StopReason::Completed)), false).is_some());
        assert!(
            life.turn_ended(second.id, Ok(SubagentResult::new(StopReason::Completed)), false).is_none(),
            "repeated"
        );
    }

    #[test]
    fn nothing_settles_while_a_write_a_hold_a_child_or_a_start_is_in_flight() {
        let mut life = Life::new(None);
        life.begin_record();
        assert!(!settles(&mut life), "a write in flight");
        life.write_ended(None, 0);
        life.hold();
        assert!(!settles(&mut life), "held");
        life.release();
        life.child_joined();
        assert!(!settles(&mut life), "owns a live child");
        life.child_left();
        assert!(matches!(life.next(Lane::Local, true, &Gate::Free, || 0), Step::Idle), "a start under it is in flight");
        assert!(
            matches!(life.next(Lane::Root, false, &Gate::Free, || 0), Step::Idle),
            "a root never settles by itself"
        );
        assert!(settles(&mut life));
    }

    #[test]
    fn an_interrupt_parks_input_until_a_waking_send() {
        let (mut life, mut mint) = (Life::new(None), ids());
        accept(&mut life, "m1");
        let plan = run(&mut life, &mut mint);
        accept(&mut life, "m2"); // queued behind the running turn
        life.interrupt(None).expect("the running turn is signalled").abort();
        assert!(plan.signal.is_aborted());
        life.turn_ended(plan.id, Ok(SubagentResult::new(StopReason::Aborted)), false);
        assert!(
            matches!(life.next(Lane::Local, false, &Gate::Free, &mut mint), Step::Idle),
            "parked: neither runs nor settles"
        );
        accept(&mut life, "m3"); // a waking send
        let plan = run(&mut life, &mut mint);
        assert_eq!(plan.input.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["m2", "m3"]);
    }

    #[test]
    fn an_interrupted_member_with_nothing_parked_settles_and_parked_input_from_a_log_does_not_keep_it() {
        let mut life = Life::new(None);
        life.interrupt(None);
        assert!(settles(&mut life), "nothing parked");
        let mut cold = Life::new(None);
        cold.adopt(Lane::Local, adopted(vec![message("m1", Scheduling::Queue)], true, false));
        assert!(!cold.is_busy(Lane::Local) && settles(&mut cold), "its input stays durable in the log");
        let mut live = Life::new(None);
        live.adopt(Lane::Local, adopted(vec![message("m1", Scheduling::Queue)], false, false));
        assert!(live.is_busy(Lane::Local), "unparked input from a log runs");
    }

    #[test]
    fn a_turn_stopped_before_the_host_saw_it_puts_its_input_back_first() {
        let (mut life, mut mint) = (Life::new(None), ids());
        accept(&mut life, "m1");
        let plan = run(&mut life, &mut mint);
        life.inbox.push_back(message("m2", Scheduling::Queue));
        life.turn_unseen(plan.id, plan.input);
        assert!(life.consumed(plan.id).is_empty());
        life.turn_ended(plan.id, Ok(SubagentResult::new(StopReason::Aborted)), false);
        let again = run(&mut life, &mut mint);
        assert!(again.first, "the host never saw the first one");
        assert_eq!(again.input.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["m1", "m2"]);
    }

    #[test]
    fn steered_messages_go_to_the_running_turn_and_count_as_consumed() {
        let (mut life, mut mint) = (Life::new(None), ids());
        accept(&mut life, "m1");
        let plan = run(&mut life, &mut mint);
        life.begin_write(0, None).unwrap();
        life.write_ended(Some(message("s1", Scheduling::Steer)), 0);
        life.begin_write(0, None).unwrap();
        life.write_ended(Some(message("q1", Scheduling::Queue)), 0);
        assert!(life.steer_pending());
        assert_eq!(life.take_steered(plan.id).len(), 1);
        assert_eq!(life.consumed(plan.id), ["m1", "s1"]);
        assert_eq!(life.inbox.len(), 1, "queued input waits for the next turn");
    }

    #[test]
    fn a_structured_capture_closes_input_and_closing_refuses_writes() {
        let (mut life, mut mint) = (Life::new(None), ids());
        accept(&mut life, "m1");
        let plan = run(&mut life, &mut mint);
        let mut captured = SubagentResult::new(StopReason::Completed);
        captured.structured = Some(Value::from(true));
        life.turn_ended(plan.id, Ok(captured), true);
        assert_eq!(life.begin_write(0, None), Err(Refusal::InputClosed));
        let mut other = Life::new(None);
        assert!(matches!(other.close(), Some(None)));
        assert!(other.close().is_none(), "settlement begins once");
        assert_eq!(other.begin_write(0, None), Err(Refusal::NotLive));
        other.begin_record(); // its own record still lands
        assert!(!other.write_ended(None, 0));
        other.left();
        assert!(!other.is_busy(Lane::Local));
    }

    fn spent_gate() -> Gate {
        Gate::Spent(Exhausted { owner: "r".into(), dimension: budget::Dimension::Turns, limit: 1 })
    }

    fn queued(id: &str) -> InboxMessage {
        message(id, Scheduling::Queue)
    }

    fn input_ids(plan: &TurnPlan) -> Vec<&str> {
        plan.input.iter().map(|m| m.id.as_str()).collect()
    }

    #[test]
    fn input_waiting_for_budget_room_is_busy_until_its_next_move_finds_room() {
        let (mut life, mut mint) = (Life::new(None), ids());
        accept(&mut life, "m1");
        assert!(matches!(life.next(Lane::Local, false, &Gate::Wait, &mut mint), Step::Idle));
        assert!(life.waits_for_budget() && life.is_busy(Lane::Local), "it waits for room, and would run");
        assert!(
            matches!(life.next(Lane::Local, false, &Gate::Wait, &mut mint), Step::Idle),
            "still no room: it neither runs nor settles around input it will run"
        );
        let plan = run(&mut life, &mut mint);
        assert!(!life.waits_for_budget(), "each move looks at the budgets anew");
        assert_eq!(input_ids(&plan), ["m1"]);
    }

    #[test]
    fn a_spent_budget_parks_input_that_messages_do_not_wake_until_a_budget_is_raised() {
        let (mut local, mut mint) = (Life::new(None), ids());
        accept(&mut local, "m1");
        assert!(matches!(local.next(Lane::Local, false, &spent_gate(), &mut mint), Step::Exhausted));
        assert!(!local.is_busy(Lane::Local) && local.has_parked_input());
        accept(&mut local, "m2");
        assert!(local.has_parked_input(), "a message does not wake it");
        assert!(settles(&mut local), "a local member settles around its input, durable in its log");
        assert!(local.unexhaust(), "a raised budget wakes it");
        assert!(!local.unexhaust(), "once");
        assert_eq!(input_ids(&run(&mut local, &mut mint)), ["m1", "m2"]);

        let mut root = Life::new(None);
        accept(&mut root, "m1");
        assert!(matches!(root.next(Lane::Root, false, &spent_gate(), &mut mint), Step::Exhausted));
        root.interrupt(None);
        accept(&mut root, "m2");
        assert!(root.has_parked_input(), "interrupted while exhausted, it stays exhausted");
        assert!(root.unexhaust() && root.has_input_to_run(), "a raised budget wakes it");
    }

    #[test]
    fn a_member_resident_after_a_spent_stop_records_it_again_or_parks_on_a_message() {
        let mut mint = ids();
        // Input pending (a root reopened to rerun): its next move records the stop again.
        let mut rerun = Life::new(None);
        rerun.adopt(Lane::Root, adopted(vec![queued("m1")], false, true));
        assert!(rerun.has_input_to_run() && rerun.is_busy(Lane::Root));
        assert!(matches!(rerun.next(Lane::Root, false, &spent_gate(), &mut mint), Step::Exhausted));
        assert!(rerun.has_parked_input() && !rerun.is_busy(Lane::Root));
        // Nothing pending (a resume): a message parks, it does not run.
        let mut resumed = Life::new(None);
        resumed.adopt(Lane::Local, adopted(Vec::new(), false, true));
        accept(&mut resumed, "m1");
        assert!(resumed.has_parked_input() && !resumed.is_busy(Lane::Local));
        assert!(resumed.unexhaust());
        assert_eq!(input_ids(&run(&mut resumed, &mut mint)), ["m1"]);
    }

    #[test]
    fn a_spent_stop_recorded_takes_the_last_output_and_names_the_input_it_answers() {
        let (mut child, mut mint) = (Life::new(None), ids());
        accept(&mut child, "m1");
        let plan = run(&mut child, &mut mint);
        let mut done = SubagentResult::new(StopReason::Completed);
        done.output = Value::from("the last words");
        child.turn_ended(plan.id, Ok(done), false);
        accept(&mut child, "m2");
        assert!(matches!(child.next(Lane::Local, false, &spent_gate(), &mut mint), Step::Exhausted));
        child.begin_record();
        let mut stop = SubagentResult::new(StopReason::BudgetExhausted);
        assert_eq!(child.exhausted_recorded(&mut stop, true), ["m2"]);
        assert_eq!(stop.output, Value::from("the last words"));
        assert!(!child.writing(), "the record's write ended");
        assert_eq!(child.take_last().unwrap().unwrap().stop_reason, StopReason::BudgetExhausted, "a child keeps it");

        let mut root = Life::new(None);
        root.begin_record();
        let mut stop = SubagentResult::new(StopReason::BudgetExhausted);
        assert!(root.exhausted_recorded(&mut stop, false).is_empty());
        assert!(root.take_last().is_none(), "a root does not keep it");
    }

    #[test]
    fn what_the_log_says_decides_how_a_member_becomes_resident() {
        let mut mint = ids();
        let mut root = Life::new(None);
        root.adopt(Lane::Root, Adopted { ran: true, ..adopted(vec![queued("m1")], true, false) });
        assert!(root.has_parked_input(), "a root's pending input waits as after an interrupt");
        accept(&mut root, "m2"); // a waking send
        let plan = match root.next(Lane::Root, false, &Gate::Free, &mut mint) {
            Step::Run(plan) => plan,
            _ => panic!("expected a turn"),
        };
        assert_eq!(input_ids(&plan), ["m1", "m2"]);
        assert!(!plan.first, "the log records a turn its host was handed");

        let mut lost = Life::new(None);
        lost.adopt(
            Lane::Local,
            Adopted { last: Some(SubagentResult::new(StopReason::Error)), ..adopted(vec![], true, false) },
        );
        assert!(!lost.has_parked_input(), "nothing pending: nothing parked");
        assert!(lost.take_last().is_some(), "a lost turn's result is its last");
    }

    #[test]
    fn messages_found_in_the_log_count_in_the_queue_and_wake_nothing() {
        let (mut life, mut mint) = (Life::new(None), ids());
        accept(&mut life, "m1");
        let plan = run(&mut life, &mut mint);
        life.interrupt(None);
        life.turn_ended(plan.id, Ok(SubagentResult::new(StopReason::Aborted)), false);
        let mut found = queued("m2");
        found.content = Value::from("x".repeat(100));
        let size = queued_size(&found);
        life.found_in_log([found]);
        assert_eq!(life.queued(), size, "held like any input");
        assert_eq!(life.begin_write(1, Some(size)), Err(Refusal::Full(size)), "the cap counts it");
        assert!(life.has_parked_input(), "not a waking send: nobody was told it landed");
        accept(&mut life, "m3");
        let plan = run(&mut life, &mut mint);
        assert_eq!(input_ids(&plan), ["m2", "m3"]);
        assert_eq!(life.queued(), 0, "the turn took its bytes");
    }

    #[test]
    fn a_turns_wait_lines_up_is_woken_once_and_ends_with_its_turn() {
        let (mut life, mut mint) = (Life::new(None), ids());
        accept(&mut life, "m1");
        let plan = run(&mut life, &mut mint);
        life.begin_wait(Wait::Steer, 7);
        assert_eq!(life.waits_for(), Some(Wait::Steer));
        let wake = Deferred::new();
        assert_eq!(life.line_up(7, wake.clone()), Some(false), "new in line");
        assert_eq!(life.line_up(8, Deferred::new()), None, "not this member's wait");
        assert!(life.steer_wake().is_none(), "no steered message pending");
        life.begin_write(0, None).unwrap();
        life.write_ended(Some(message("s1", Scheduling::Steer)), 0);
        assert!(life.steer_wake().is_some(), "a steered message wakes a wait for one");
        assert!(life.wake_for_quiet(8).is_none(), "another ticket");
        assert!(life.wake_for_quiet(7).is_some(), "woken for a quiet moment");
        assert!(life.wake_for_quiet(7).is_none(), "once");
        assert_eq!(life.line_up(7, Deferred::new()), Some(false), "in line again");
        assert_eq!(life.end_wait(7), Some(true), "it ends in line: the driver takes it out of its tree's line");
        assert_eq!(life.end_wait(7), None, "once");
        // A wait still in line when its turn ends is woken and cleared.
        life.begin_wait(Wait::Interrupt, 9);
        life.line_up(9, wake.clone());
        life.turn_ended(plan.id, Ok(SubagentResult::new(StopReason::Completed)), false);
        assert!(wake.is_set() && life.waits_for().is_none() && life.end_wait(9).is_none());
    }

    #[test]
    fn an_external_runs_result_is_the_first_known_and_teardown_takes_it() {
        let mut life = Life::new(None);
        life.run_ended(Ok(SubagentResult::new(StopReason::MaxTokens)));
        life.run_ended(Ok(SubagentResult::new(StopReason::Aborted)));
        assert!(life.is_busy(Lane::External), "a live run works");
        assert_eq!(life.take_last().unwrap().unwrap().stop_reason, StopReason::MaxTokens);
        assert!(life.take_last().is_none());
    }

    #[test]
    fn a_full_queue_refuses_a_message_but_not_a_notice_and_a_move_is_kept() {
        let mut life = Life::new(None);
        life.begin_write(10, Some(16)).unwrap();
        assert_eq!(life.begin_write(10, Some(16)), Err(Refusal::Full(10)));
        assert!(life.begin_write(10, None).is_ok(), "a notice always lands");
        assert_eq!(life.queued(), 20);
        assert!(!life.write_ended(None, 10) && life.queued() == 10, "a refused write gives its bytes back");
        assert_eq!(life.cwd(), None);
        life.moved("/work/sub".into());
        assert_eq!(life.cwd(), Some("/work/sub"));
    }

    #[test]
    fn a_trees_admission_reserves_a_spawn_and_opens_the_childs_budget() {
        let mut ledger = Ledger::default();
        ledger.set("p", Budget { spawns: Some(1), ..Budget::default() }, Spent::default());
        let mut tree = Tree::new(ledger);
        assert!(tree.exhausted(&["p"], true).is_none());
        tree.admit(&["p"]);
        assert_eq!(tree.reserved(), 1);
        assert!(tree.exhausted(&["p"], true).is_some(), "the start in flight counts against spawns");
        let own = Budget { turns: Some(3), ..Budget::default() };
        tree.admitted(&["p"], Some("c"), true, None, Some(own));
        assert!(tree.full(1) && tree.reserved() == 0, "the slot is live");
        assert_eq!(tree.ledger().budget_of("c").map(|(set, _)| set), Some(own));
        assert!(tree.exhausted(&["p"], true).is_some(), "the committed spawn is spent");
        tree.admit(&["c", "p"]);
        tree.admitted(&["c", "p"], None, false, None, None);
        assert!(tree.full(1), "a failed start gives its slot back");
    }

    #[test]
    fn a_tree_without_budgets_is_free_and_a_turn_kicks_waiters_once() {
        let mut free = Tree::default();
        assert_eq!(free.gate(&["m"]), Gate::Free);
        assert!(!free.turn_spent(1, &["m"], &Spent::default(), None), "nothing to count");
        let mut ledger = Ledger::default();
        ledger.set("m", Budget { turns: Some(1), ..Budget::default() }, Spent::default());
        let mut tree = Tree::new(ledger);
        let Gate::Open(allowance) = tree.gate(&["m"]) else { panic!("room for one turn") };
        tree.reserve_turn(1, &["m"], &allowance);
        assert_eq!(tree.gate(&["m"]), Gate::Wait, "its room is reserved");
        tree.wait_for_room();
        let one = Spent { turns: 1, ..Spent::default() };
        assert!(tree.turn_spent(1, &["m"], &one, None), "the end kicks the waiting");
        assert!(matches!(tree.gate(&["m"]), Gate::Spent(_)));
        tree.set_budget("m", Some(Budget { turns: Some(2), ..Budget::default() }), one);
        assert!(matches!(tree.gate(&["m"]), Gate::Open(_)), "a raised budget has room");
        tree.set_budget("m", None, Spent::default());
        assert_eq!(tree.remaining(&["m"]), Budget::default(), "cleared");
    }

    #[test]
    fn a_tree_drains_recovers_fires_its_changes_and_keeps_its_line() {
        let mut tree = Tree::default();
        assert!(!tree.is_draining() && !tree.is_recovering());
        tree.drain();
        tree.begin_recovery();
        assert!(tree.is_draining() && tree.is_recovering());
        tree.end_recovery();
        assert!(!tree.is_recovering());
        let changed = tree.changed();
        let fired = tree.take_changed();
        fired.set(());
        assert!(changed.is_set() && !tree.changed().is_set(), "a new wake waits for the next change");
        let (a, b) = (tree.mint_ticket(), tree.mint_ticket());
        assert!(b > a);
        tree.line_up("m1", a, true);
        tree.line_up("m2", b, false);
        assert_eq!(tree.next_in_line(), Some(("m2".to_owned(), b)), "woken for a moment that passed: first again");
        tree.line_up("m3", b + 1, true);
        tree.leave_line(a);
        assert_eq!(tree.next_in_line(), Some(("m3".to_owned(), b + 1)));
        assert!(!tree.has_waiters());
        let last = tree.changed();
        tree.close();
        assert!(last.is_set(), "closing wakes whoever waits on its work");
    }
}
