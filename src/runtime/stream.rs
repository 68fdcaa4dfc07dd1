//! [`EventStream`]: the runtime's events as a pull stream (`runtime.events()`
//! in JS), filtered by tree and type, for consumers that read at their own pace.
//!
//! Every stream of a runtime reads one journal (`Journal`) through its own cursor: an
//! event is kept once, however many streams want it, and dropped once every
//! stream that wanted it read it (or was moved past it). So N readers cost one
//! copy, and what the journal holds is bounded in total by the largest
//! `bufferBytes` of its open readers, not by their sum.
//!
//! A consumer that lags cannot grow memory without bound from deltas: a
//! member's parts coalesce into its latest entry (same turn and kind) as long
//! as nothing else of that member was journaled after it and no reader that
//! wants it has read it, so a coalesced text keeps its latest
//! [`MAX_COALESCED_BYTES`]. Every other event is kept: those follow durable
//! work (a start, a message accepted, a turn's end), which a reader is shown
//! in order.
//!
//! A reader that falls behind is not kept forever, and never costs the other
//! readers anything: once more than its `bufferBytes` waits for it
//! ([`DEFAULT_BUFFER_BYTES`]), or the journal passes its total bound with the
//! reader at its oldest end, the oldest events waiting for it are dropped for
//! it, and its next read is a [`RuntimeEvent::Gap`] saying how many it missed
//! (then the events after them). A gap is never silent: the reader lists the
//! tree again, or reads the logs, for what it missed.

use super::{Runtime, RuntimeEvent};
use crate::core::error::Result;
use crate::core::exec::Deferred;
use crate::core::hash::HashMap;
use std::collections::VecDeque;
use std::rc::Rc;

/// The most text one coalesced delta keeps (its latest bytes).
pub const MAX_COALESCED_BYTES: usize = 1 << 20;
/// What a stream holds for a consumer that lags before it is closed (`bufferBytes`).
pub const DEFAULT_BUFFER_BYTES: usize = 16 << 20;
/// The range `bufferBytes` may be set to.
pub const BUFFER_BYTES_RANGE: (usize, usize) = (64 << 10, 256 << 20);
/// What a queued event costs beyond the text and data it carries (ids, names, its slot).
const EVENT_BYTES: usize = 256;

/// Every event type's name, as listeners and streams filter by it.
pub const EVENT_TYPES: &[&str] = &[
    "subagent/start",
    "subagent/end",
    "subagent/catalog",
    "subagent/message",
    "subagent/turn",
    "subagent/delta",
    "subagent/tool",
    "subagent/provider-added",
    "subagent/provider-removed",
    "subagent/flush-failed",
];

/// The name of an event's type (`subagent/delta`, ...).
pub fn event_type(event: &RuntimeEvent) -> &'static str {
    match event {
        RuntimeEvent::Start(_) => "subagent/start",
        RuntimeEvent::End(_) => "subagent/end",
        RuntimeEvent::Catalog { .. } => "subagent/catalog",
        RuntimeEvent::Message { .. } => "subagent/message",
        RuntimeEvent::Turn { .. } => "subagent/turn",
        RuntimeEvent::Delta { .. } => "subagent/delta",
        RuntimeEvent::Tool { .. } => "subagent/tool",
        RuntimeEvent::ProviderAdded(_) => "subagent/provider-added",
        RuntimeEvent::ProviderRemoved(_) => "subagent/provider-removed",
        RuntimeEvent::FlushFailed { .. } => "subagent/flush-failed",
        // A stream's own (never a listener's, never filtered out).
        RuntimeEvent::Gap { .. } => "subagent/gap",
    }
}

/// The member an event is about, when it is about one.
fn member_of(event: &RuntimeEvent) -> Option<&str> {
    match event {
        RuntimeEvent::Start(i) => Some(&i.id),
        RuntimeEvent::End(e) => Some(&e.info.id),
        RuntimeEvent::Message { session_id, .. }
        | RuntimeEvent::Turn { session_id, .. }
        | RuntimeEvent::Delta { session_id, .. }
        | RuntimeEvent::Tool { session_id, .. } => Some(session_id),
        _ => None,
    }
}

/// What an event held in a queue costs: [`EVENT_BYTES`] plus the text and data it carries.
fn event_size(event: &RuntimeEvent) -> usize {
    use crate::core::limits::memory_size;
    let carried = match event {
        RuntimeEvent::Start(i) => i.label.len(),
        RuntimeEvent::End(e) => e.info.label.len() + e.error.as_ref().map_or(0, String::len),
        RuntimeEvent::Message { content, .. } => content.as_ref().map_or(0, memory_size),
        RuntimeEvent::Turn { output, .. } => output.as_ref().map_or(0, String::len),
        RuntimeEvent::Delta { part, .. } => part.text.len(),
        RuntimeEvent::Tool { input, end, .. } => {
            input.as_ref().map_or(0, memory_size) + end.as_ref().map_or(0, |e| e.content.len())
        }
        _ => 0,
    };
    EVENT_BYTES + carried
}

/// One journaled event and what holding it costs ([`event_size`]).
struct Entry {
    event: RuntimeEvent,
    size: usize,
}

/// One stream's place in the [`Journal`].
struct Reader {
    key: u64,
    /// The seq of the next entry it may read: at its first wanted unread
    /// entry, or the journal's end when it has none.
    cursor: u64,
    root: Option<String>,
    types: Option<Vec<String>>,
    /// What may wait for it (`bufferBytes`).
    max_bytes: usize,
    /// What waits for it: its wanted entries from its cursor on.
    queued: usize,
    /// Wanted events dropped before it read them, told as a gap next.
    missed: u64,
    wake: Option<Deferred<()>>,
}

impl Reader {
    /// Whether it wants `event`: of its tree (or of none) and of its types.
    fn wants(&self, event: &RuntimeEvent) -> bool {
        let root = match (&self.root, event.root()) {
            (Some(mine), Some(theirs)) => mine == theirs,
            _ => true,
        };
        root && self.types.as_ref().is_none_or(|t| t.iter().any(|t| t == event_type(event)))
    }
}

/// What a read of the journal found (a value returned and matched at once:
/// boxing the event would cost an allocation per read for nothing).
#[allow(clippy::large_enum_variant)]
pub(crate) enum Read {
    Event(RuntimeEvent),
    /// Nothing yet: wait on the reader's wake.
    Empty(Deferred<()>),
    /// The stream is closed.
    Closed,
}

/// The events every stream of a runtime reads (see the module doc).
#[derive(Default)]
pub(crate) struct Journal {
    entries: VecDeque<Entry>,
    /// The seq of `entries[0]`.
    first: u64,
    /// What the entries cost in all.
    bytes: usize,
    /// Per member, the seq of its latest entry (deltas coalesce into it).
    latest: HashMap<String, u64>,
    readers: Vec<Reader>,
    /// The runtime subscription that feeds it, while it has readers.
    pub(crate) subscription: Option<u64>,
}

impl Journal {
    fn end(&self) -> u64 {
        self.first + self.entries.len() as u64
    }

    fn at(&self, seq: u64) -> &Entry {
        &self.entries[(seq - self.first) as usize]
    }

    /// A new reader, from now on.
    pub fn open(&mut self, key: u64, root: Option<String>, types: Option<Vec<String>>, max_bytes: usize) {
        let cursor = self.end();
        self.readers.push(Reader { key, cursor, root, types, max_bytes, queued: 0, missed: 0, wake: None });
    }

    /// Ends reader `key` (what only it waited for goes); returns its wake to fire.
    pub fn close(&mut self, key: u64) -> Option<Deferred<()>> {
        let i = self.readers.iter().position(|r| r.key == key)?;
        let reader = self.readers.remove(i);
        self.trim();
        reader.wake
    }

    pub fn has_readers(&self) -> bool {
        !self.readers.is_empty()
    }

    /// Journals `event` for the readers that want it (coalescing a delta
    /// into its member's latest entry); returns the wakes of readers that
    /// waited for it.
    pub fn push(&mut self, event: &RuntimeEvent) -> Vec<Deferred<()>> {
        if !self.readers.iter().any(|r| r.wants(event)) {
            return Vec::new();
        }
        if self.coalesce(event) {
            self.bound();
            return Vec::new();
        }
        let seq = self.end();
        let size = event_size(event);
        if let Some(member) = member_of(event) {
            self.latest.insert(member.to_owned(), seq);
        }
        self.entries.push_back(Entry { event: event.clone(), size });
        self.bytes += size;
        let end = self.end();
        let mut wakes = Vec::new();
        for r in &mut self.readers {
            if r.wants(event) {
                r.queued += size;
                wakes.extend(r.wake.take());
            } else if r.queued == 0 {
                // Nothing waits for it before this: it need not keep this.
                r.cursor = end;
            }
        }
        self.bound();
        wakes
    }

    /// A delta merged into its member's latest entry: the same turn and kind,
    /// nothing of that member after it, and unread by every reader that wants it.
    fn coalesce(&mut self, event: &RuntimeEvent) -> bool {
        let RuntimeEvent::Delta { session_id, turn_id, part, .. } = event else { return false };
        let Some(&seq) = self.latest.get(session_id.as_str()).filter(|&&seq| seq >= self.first) else {
            return false;
        };
        let unread = self.readers.iter().filter(|r| r.wants(event)).all(|r| r.cursor <= seq);
        let index = (seq - self.first) as usize;
        let Some(Entry { event: RuntimeEvent::Delta { turn_id: t, part: held, .. }, size }) =
            self.entries.get_mut(index)
        else {
            return false;
        };
        if !unread || *t != *turn_id || held.kind != part.kind {
            return false;
        }
        let before = held.text.len();
        held.text.push_str(&part.text);
        keep_tail(&mut held.text, MAX_COALESCED_BYTES);
        let after = held.text.len();
        *size = *size - before + after;
        self.bytes = self.bytes - before + after;
        for r in self.readers.iter_mut().filter(|r| r.cursor <= seq && r.wants(event)) {
            r.queued = r.queued - before + after;
        }
        true
    }

    /// Keeps each reader within its `bufferBytes` and the journal within the
    /// largest of them: the oldest events waiting past a bound are dropped for
    /// the readers they waited for (each told as a gap), then what no reader
    /// needs goes.
    fn bound(&mut self) {
        for i in 0..self.readers.len() {
            while self.readers[i].queued > self.readers[i].max_bytes {
                self.skip_first_wanted(i);
            }
        }
        let total = self.readers.iter().map(|r| r.max_bytes).max().unwrap_or(0);
        while self.bytes > total && !self.entries.is_empty() {
            let first = self.first;
            for i in 0..self.readers.len() {
                if self.readers[i].cursor <= first {
                    if self.readers[i].wants(&self.at(first).event) {
                        self.skip_first_wanted(i);
                    } else {
                        self.readers[i].cursor = first + 1;
                    }
                }
            }
            self.trim();
        }
        self.trim();
    }

    /// Reader `i` misses the first entry it wants from its cursor on.
    fn skip_first_wanted(&mut self, i: usize) {
        let end = self.end();
        let mut seq = self.readers[i].cursor.max(self.first);
        while seq < end && !self.readers[i].wants(&self.at(seq).event) {
            seq += 1;
        }
        if seq == end {
            self.readers[i].queued = 0;
            self.readers[i].cursor = end;
            return;
        }
        let size = self.at(seq).size;
        let r = &mut self.readers[i];
        r.queued = r.queued.saturating_sub(size);
        r.missed += 1;
        r.cursor = if r.queued == 0 { end } else { seq + 1 };
    }

    /// Drops the entries before every reader's cursor.
    fn trim(&mut self) {
        let keep = self.readers.iter().map(|r| r.cursor).min().unwrap_or(self.end());
        while self.first < keep {
            let Some(entry) = self.entries.pop_front() else { break };
            self.bytes -= entry.size;
            if let Some(member) = member_of(&entry.event) {
                if self.latest.get(member) == Some(&self.first) {
                    self.latest.remove(member);
                }
            }
            self.first += 1;
        }
    }

    /// Reader `key`'s next event: a gap first when it missed some.
    pub fn read(&mut self, key: u64) -> Read {
        let end = self.end();
        let Some(i) = self.readers.iter().position(|r| r.key == key) else { return Read::Closed };
        if self.readers[i].missed > 0 {
            let missed = std::mem::take(&mut self.readers[i].missed);
            return Read::Event(RuntimeEvent::Gap { missed });
        }
        let mut seq = self.readers[i].cursor.max(self.first);
        while seq < end {
            if self.readers[i].wants(&self.at(seq).event) {
                let Entry { event, size } = self.at(seq);
                let (event, size) = (event.clone(), *size);
                let r = &mut self.readers[i];
                r.queued = r.queued.saturating_sub(size);
                r.cursor = if r.queued == 0 { end } else { seq + 1 };
                self.trim();
                return Read::Event(event);
            }
            seq += 1;
        }
        let r = &mut self.readers[i];
        r.cursor = end;
        r.queued = 0;
        Read::Empty(r.wake.get_or_insert_with(Deferred::new).clone())
    }

    /// Events waiting for reader `key`.
    pub fn waiting(&self, key: u64) -> usize {
        let Some(r) = self.readers.iter().find(|r| r.key == key) else { return 0 };
        let from = r.cursor.max(self.first);
        (from..self.end()).filter(|&seq| r.wants(&self.at(seq).event)).count() + usize::from(r.missed > 0)
    }

    /// What the journal holds: `(events, bytes)`.
    #[cfg(test)]
    pub fn held(&self) -> (usize, usize) {
        (self.entries.len(), self.bytes)
    }
}

/// Cuts `text` to its last `max` bytes, on a character boundary.
fn keep_tail(text: &mut String, max: usize) {
    if text.len() > max {
        let mut cut = text.len() - max;
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        text.drain(..cut);
    }
}

/// A subscription read as a stream. Dropping or closing it ends it. Its
/// place in the runtime's journal is by `key`: the journal's one listener
/// fills it and the consumer reads it, each in a step of its own.
pub struct EventStream {
    runtime: Runtime,
    key: u64,
}

impl Runtime {
    /// The runtime's events from now on, as a stream: of one tree when `root`
    /// is given, of these types when `types` is (JS names, `subagent/delta`, ...).
    /// A reader that lets more than `buffer_bytes` wait for it misses the
    /// oldest, told as a gap (see the module doc).
    pub fn events(&self, root: Option<String>, types: Option<Vec<String>>, buffer_bytes: usize) -> EventStream {
        let key = self.token();
        let subscribed = {
            let mut hooks = self.0.hooks.borrow_mut();
            hooks.events.open(key, root, types, buffer_bytes);
            hooks.events.subscription.is_some()
        };
        if !subscribed {
            // One listener feeds every stream. Weak: the runtime's hooks hold it.
            let runtime = self.downgrade();
            let token = self.subscribe(
                None,
                Rc::new(move |event: &RuntimeEvent| {
                    let Some(runtime) = runtime.upgrade() else { return };
                    let wakes = runtime.0.hooks.borrow_mut().events.push(event);
                    for wake in wakes {
                        wake.set(());
                    }
                }),
            );
            self.0.hooks.borrow_mut().events.subscription = Some(token);
        }
        EventStream { runtime: self.clone(), key }
    }
}

impl EventStream {
    /// The next event, waiting for one (a [`RuntimeEvent::Gap`] first when it
    /// missed some); `None` once closed.
    pub async fn next(&self) -> Result<Option<RuntimeEvent>> {
        loop {
            let read = self.runtime.0.hooks.borrow_mut().events.read(self.key);
            match read {
                Read::Event(event) => return Ok(Some(event)),
                Read::Closed => return Ok(None),
                Read::Empty(wake) => wake.wait().await,
            }
        }
    }

    /// The next event if one is waiting, without waiting.
    pub fn try_next(&self) -> Option<RuntimeEvent> {
        match self.runtime.0.hooks.borrow_mut().events.read(self.key) {
            Read::Event(event) => Some(event),
            Read::Empty(_) | Read::Closed => None,
        }
    }

    /// Events waiting for it (a gap counts as one).
    pub fn queued(&self) -> usize {
        self.runtime.0.hooks.borrow().events.waiting(self.key)
    }

    /// Ends the stream: a waiting `next` answers `None`, and what waited only
    /// for it goes. The journal's listener goes with its last stream.
    pub fn close(&self) {
        let (wake, unsubscribe) = {
            let mut hooks = self.runtime.0.hooks.borrow_mut();
            let wake = hooks.events.close(self.key);
            let last = !hooks.events.has_readers();
            (wake, if last { hooks.events.subscription.take() } else { None })
        };
        if let Some(token) = unsubscribe {
            self.runtime.unsubscribe(token);
        }
        if let Some(wake) = wake {
            wake.set(());
        }
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::delta::{Part, PartKind};

    fn delta(session: &str, turn: u64, text: &str) -> RuntimeEvent {
        RuntimeEvent::Delta {
            root_id: "r".into(),
            session_id: session.into(),
            name: session.into(),
            turn_id: turn,
            part: Part { kind: PartKind::TextDelta, text: text.into() },
        }
    }

    fn turn_end(session: &str) -> RuntimeEvent {
        RuntimeEvent::Turn {
            root_id: "r".into(),
            session_id: session.into(),
            name: session.into(),
            stop_reason: Some("completed".into()),
            output: None,
            parked: false,
            usage: None,
            trace: None,
        }
    }

    fn text(e: &RuntimeEvent) -> String {
        match e {
            RuntimeEvent::Delta { session_id, part, .. } => format!("{session_id}:{}", part.text),
            other => format!("{}:{}", member_of(other).unwrap_or_default(), event_type(other)),
        }
    }

    /// A journal with readers `keys` (every tree and type), each of `max` bytes.
    fn journal(keys: &[u64], max: usize) -> Journal {
        let mut j = Journal::default();
        for &k in keys {
            j.open(k, None, None, max);
        }
        j
    }

    fn read(j: &mut Journal, key: u64) -> Option<RuntimeEvent> {
        match j.read(key) {
            Read::Event(e) => Some(e),
            Read::Empty(_) | Read::Closed => None,
        }
    }

    fn push(j: &mut Journal, e: RuntimeEvent) {
        j.push(&e);
    }

    #[test]
    fn a_lagging_consumer_gets_coalesced_deltas_and_every_other_event_in_order() {
        let mut j = journal(&[1], DEFAULT_BUFFER_BYTES);
        for i in 0..1000 {
            push(&mut j, delta("a", 1, &i.to_string()[..1]));
            push(&mut j, delta("b", 1, "x"));
        }
        assert_eq!(j.held().0, 2, "one delta per member");
        push(&mut j, turn_end("a"));
        push(&mut j, delta("a", 2, "next")); // after a's turn end: not merged into its earlier delta
        push(&mut j, delta("b", 1, "y"));
        let out: Vec<String> = std::iter::from_fn(|| read(&mut j, 1)).map(|e| text(&e)).collect();
        let a: String = (0..1000).map(|i: i32| i.to_string().chars().next().unwrap()).collect();
        assert_eq!(
            out,
            [format!("a:{a}"), format!("b:{}y", "x".repeat(1000)), "a:subagent/turn".into(), "a:next".into()]
        );
        assert_eq!(j.held(), (0, 0), "read by its only reader: nothing held");
        // Read items are not coalesced into.
        push(&mut j, delta("a", 2, "one"));
        assert_eq!(read(&mut j, 1).map(|e| text(&e)).as_deref(), Some("a:one"));
        push(&mut j, delta("a", 2, "two"));
        assert_eq!(read(&mut j, 1).map(|e| text(&e)).as_deref(), Some("a:two"));
    }

    #[test]
    fn readers_share_one_copy_and_a_delta_read_by_one_is_not_coalesced_into_for_it() {
        let mut j = journal(&[1, 2, 3], DEFAULT_BUFFER_BYTES);
        for _ in 0..100 {
            push(&mut j, turn_end("b"));
        }
        assert_eq!(j.held(), (100, 100 * EVENT_BYTES), "three readers, one copy");
        for _ in 0..100 {
            assert!(read(&mut j, 1).is_some());
        }
        assert_eq!(j.held().0, 100, "still wanted by the others");
        for _ in 0..100 {
            read(&mut j, 2);
            read(&mut j, 3);
        }
        assert_eq!(j.held(), (0, 0));
        push(&mut j, delta("a", 1, "he"));
        assert_eq!(read(&mut j, 1).map(|e| text(&e)).as_deref(), Some("a:he"));
        push(&mut j, delta("a", 1, "llo")); // reader 1 read "he": a new entry, not a merge
        assert_eq!(read(&mut j, 1).map(|e| text(&e)).as_deref(), Some("a:llo"));
        assert_eq!(read(&mut j, 2).map(|e| text(&e)).as_deref(), Some("a:he"));
        assert_eq!(read(&mut j, 2).map(|e| text(&e)).as_deref(), Some("a:llo"));
        // A reader of another tree neither pins nor gets this tree's events.
        let mut k = Journal::default();
        k.open(1, Some("other".into()), None, 64 << 10);
        k.open(2, None, None, 64 << 10);
        for _ in 0..1000 {
            push(&mut k, turn_end("b"));
            read(&mut k, 2);
        }
        assert_eq!(k.held(), (0, 0), "the idle reader of another tree holds nothing");
        assert!(read(&mut k, 1).is_none());
    }

    #[test]
    fn a_reader_past_its_buffer_misses_the_oldest_and_is_told_with_a_gap() {
        let mut j = journal(&[1, 2], 64 << 10);
        // Deltas coalesce: a member's streamed text costs its latest bytes, not every part.
        for _ in 0..1000 {
            push(&mut j, delta("a", 1, "0123456789"));
        }
        assert_eq!(j.held().0, 1);
        // Reader 2 reads as they come; reader 1 never does.
        for _ in 0..1000 {
            push(&mut j, turn_end("b"));
            while read(&mut j, 2).is_some() {}
        }
        let (events, bytes) = j.held();
        assert!(bytes <= 64 << 10, "held within the buffer: {bytes} bytes");
        assert!(events > 200, "{events} events of 256 bytes in a 64 KiB buffer");
        let Some(RuntimeEvent::Gap { missed }) = read(&mut j, 1) else { panic!("a gap first") };
        assert_eq!(missed as usize + events, 1001, "what it missed and what it reads are every event it wanted");
        let rest = std::iter::from_fn(|| read(&mut j, 1)).count();
        assert_eq!(rest, events);
        assert_eq!(j.held(), (0, 0));
        // Reading gives its room back: a reader that keeps up misses nothing.
        let mut k = journal(&[1], 64 << 10);
        for _ in 0..10_000 {
            push(&mut k, turn_end("b"));
            assert!(!matches!(read(&mut k, 1), Some(RuntimeEvent::Gap { .. }) | None));
        }
    }

    #[test]
    fn the_journal_is_bounded_by_its_largest_buffer_however_many_readers_lag() {
        let mut j = journal(&(1..=100).collect::<Vec<_>>(), 64 << 10);
        j.open(1000, None, None, 256 << 10);
        for _ in 0..10_000 {
            push(&mut j, turn_end("b"));
        }
        let (_, bytes) = j.held();
        assert!(bytes <= 256 << 10, "101 idle readers, one bound: {bytes} bytes");
        assert!(matches!(read(&mut j, 1), Some(RuntimeEvent::Gap { .. })));
        assert!(matches!(read(&mut j, 1000), Some(RuntimeEvent::Gap { .. })));
        // Closing readers frees what only they held.
        for k in 1..=100 {
            j.close(k);
        }
        j.close(1000);
        assert_eq!(j.held(), (0, 0));
        assert!(matches!(j.read(1), Read::Closed));
    }

    #[test]
    fn a_coalesced_text_keeps_its_latest_bytes() {
        let mut j = journal(&[1], DEFAULT_BUFFER_BYTES);
        let chunk = "é".repeat(40_000); // 80,000 bytes
        for _ in 0..20 {
            push(&mut j, delta("a", 1, &chunk));
        }
        push(&mut j, delta("a", 1, "end"));
        let Some(RuntimeEvent::Delta { part, .. }) = read(&mut j, 1) else { panic!() };
        assert!(part.text.len() <= MAX_COALESCED_BYTES && part.text.ends_with("éend"));
    }
}
