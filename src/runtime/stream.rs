//! [`EventStream`]: the runtime's events as a pull stream (`runtime.events()`
//! in JS), filtered by tree and type, for consumers that read at their own pace.
//!
//! A consumer that lags cannot grow memory without bound from deltas: a
//! member's parts coalesce into the one still queued for it (same turn and
//! kind) as long as nothing else of that member was queued after it, so at
//! most one queued delta per member and kind sits between its other events,
//! and a coalesced text keeps its latest [`MAX_COALESCED_BYTES`]. Every other
//! event is kept: those follow durable work (a start, a message accepted, a
//! turn's end), which the consumer is shown in order, with nothing skipped.
//!
//! So a consumer that stops reading is not kept forever: once what waits for
//! it passes its buffer (`bufferBytes`, [`DEFAULT_BUFFER_BYTES`]), the stream
//! drops what it held, unsubscribes, and its next read fails
//! `LIMIT_EXCEEDED`; the consumer opens another and reads the logs for what
//! it missed. A gap is never silent.

use super::{Runtime, RuntimeEvent};
use crate::core::error::{Result, SubagentError};
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

/// The queue between the runtime's listener and the consumer.
pub struct Queue {
    items: VecDeque<RuntimeEvent>,
    /// How many items were ever taken: item `n` is at `n - taken`.
    taken: u64,
    /// Per member, the number of its latest queued event.
    latest: HashMap<String, u64>,
    /// What the queued items cost ([`event_size`]), and the most they may.
    bytes: usize,
    max_bytes: usize,
    /// Why the stream was closed, until its consumer is told.
    failed: Option<SubagentError>,
    wake: Option<Deferred<()>>,
    closed: bool,
}

impl Default for Queue {
    fn default() -> Self {
        Queue::new(DEFAULT_BUFFER_BYTES)
    }
}

impl Queue {
    /// An empty queue that holds at most `max_bytes` for its consumer.
    pub fn new(max_bytes: usize) -> Queue {
        Queue {
            items: VecDeque::new(),
            taken: 0,
            latest: HashMap::default(),
            bytes: 0,
            max_bytes,
            failed: None,
            wake: None,
            closed: false,
        }
    }

    /// Queues an event, coalescing a delta into its member's queued one.
    pub fn push(&mut self, event: RuntimeEvent) {
        if self.closed {
            return;
        }
        let number = self.taken + self.items.len() as u64;
        if let RuntimeEvent::Delta { session_id, turn_id, part, .. } = &event {
            if let Some(&at) = self.latest.get(session_id.as_str()).filter(|&&n| n >= self.taken) {
                if let Some(RuntimeEvent::Delta { turn_id: t, part: queued, .. }) =
                    self.items.get_mut((at - self.taken) as usize)
                {
                    if *t == *turn_id && queued.kind == part.kind {
                        let before = queued.text.len();
                        queued.text.push_str(&part.text);
                        keep_tail(&mut queued.text, MAX_COALESCED_BYTES);
                        self.bytes = self.bytes - before + queued.text.len();
                        if self.bytes > self.max_bytes {
                            self.overflow();
                        }
                        return;
                    }
                }
            }
        }
        let size = event_size(&event);
        if self.bytes + size > self.max_bytes {
            return self.overflow();
        }
        self.bytes += size;
        if let Some(member) = member_of(&event) {
            self.latest.insert(member.to_owned(), number);
        }
        self.items.push_back(event);
        self.wake();
    }

    /// The consumer fell too far behind: drop what waits for it and close,
    /// keeping the reason for its next read.
    fn overflow(&mut self) {
        self.failed = Some(crate::err!(
            LimitExceeded,
            "this event stream's reader fell {} events ({} bytes) behind, past its bufferBytes ({}): the stream was closed and what it held dropped; open another and read the logs for what it missed",
            self.items.len() + 1,
            self.bytes,
            self.max_bytes
        ));
        self.items.clear();
        self.latest.clear();
        self.bytes = 0;
        self.closed = true;
        self.wake();
    }

    fn wake(&mut self) {
        if let Some(wake) = self.wake.take() {
            wake.set(());
        }
    }

    /// The next event, if one is queued.
    pub fn pop(&mut self) -> Option<RuntimeEvent> {
        let event = self.items.pop_front()?;
        self.taken += 1;
        self.bytes -= event_size(&event);
        if let Some(member) = member_of(&event) {
            if self.latest.get(member).is_some_and(|&n| n < self.taken) {
                self.latest.remove(member);
            }
        }
        Some(event)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
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

/// The queue of stream `key` (a runtime has a few streams: a list, not a map).
fn queue(streams: &mut [(u64, Queue)], key: u64) -> Option<&mut Queue> {
    streams.iter_mut().find(|(k, _)| *k == key).map(|(_, q)| q)
}

/// A subscription read as a stream. Dropping or closing it unsubscribes.
/// Its queue is with the runtime's hooks (by `key`): the listener fills it
/// and the consumer reads it, each in a step of its own.
pub struct EventStream {
    runtime: Runtime,
    /// Its queue's key in the hooks.
    key: u64,
    /// Its subscription.
    token: u64,
}

impl Runtime {
    /// The runtime's events from now on, as a stream: of one tree when `root`
    /// is given, of these types when `types` is (JS names, `subagent/delta`, ...).
    /// A reader that lets more than `buffer_bytes` wait for it is cut off (see the module doc).
    pub fn events(&self, root: Option<String>, types: Option<Vec<String>>, buffer_bytes: usize) -> EventStream {
        let key = self.token();
        self.0.hooks.borrow_mut().streams.push((key, Queue::new(buffer_bytes)));
        // Weak: the runtime's hooks hold this listener.
        let runtime = self.downgrade();
        let token = self.subscribe(
            root,
            Rc::new(move |event: &RuntimeEvent| {
                let Some(runtime) = runtime.upgrade() else { return };
                let mut hooks = runtime.0.hooks.borrow_mut();
                let Some(q) = queue(&mut hooks.streams, key) else { return };
                if !q.closed && types.as_ref().is_none_or(|t| t.iter().any(|t| t == event_type(event))) {
                    q.push(event.clone());
                }
            }),
        );
        EventStream { runtime: self.clone(), key, token }
    }
}

impl EventStream {
    /// The next event, waiting for one; `None` once closed; `LIMIT_EXCEEDED`
    /// once, when the reader fell past its buffer and the stream closed.
    pub async fn next(&self) -> Result<Option<RuntimeEvent>> {
        loop {
            let wait = {
                let mut hooks = self.runtime.0.hooks.borrow_mut();
                let Some(q) = queue(&mut hooks.streams, self.key) else { return Ok(None) };
                if let Some(event) = q.pop() {
                    return Ok(Some(event));
                }
                if let Some(e) = q.failed.take() {
                    drop(hooks);
                    self.runtime.unsubscribe(self.token);
                    return Err(e);
                }
                if q.closed {
                    return Ok(None);
                }
                q.wake.get_or_insert_with(Deferred::new).clone()
            };
            wait.wait().await;
        }
    }

    /// The next event if one is queued, without waiting.
    pub fn try_next(&self) -> Option<RuntimeEvent> {
        queue(&mut self.runtime.0.hooks.borrow_mut().streams, self.key)?.pop()
    }

    /// Events queued and not yet taken.
    pub fn queued(&self) -> usize {
        self.runtime.0.hooks.borrow().streams.iter().find(|(k, _)| *k == self.key).map_or(0, |(_, q)| q.len())
    }

    /// Unsubscribes and ends the stream: a waiting `next` answers `None`,
    /// and what was queued is dropped.
    pub fn close(&self) {
        self.runtime.unsubscribe(self.token);
        let wake = {
            let mut hooks = self.runtime.0.hooks.borrow_mut();
            let Some(q) = queue(&mut hooks.streams, self.key) else { return };
            q.closed = true;
            q.items.clear();
            q.latest.clear();
            q.bytes = 0;
            q.failed = None;
            q.wake.take()
        };
        if let Some(wake) = wake {
            wake.set(());
        }
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        self.close();
        self.runtime.0.hooks.borrow_mut().streams.retain(|(k, _)| *k != self.key);
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

    #[test]
    fn a_lagging_consumer_gets_coalesced_deltas_and_every_other_event_in_order() {
        let mut q = Queue::default();
        for i in 0..1000 {
            q.push(delta("a", 1, &i.to_string()[..1]));
            q.push(delta("b", 1, "x"));
        }
        assert_eq!(q.len(), 2, "one queued delta per member");
        q.push(turn_end("a"));
        q.push(delta("a", 2, "next")); // after a's turn end: not merged into its earlier delta
        q.push(delta("b", 1, "y"));
        let out: Vec<String> = std::iter::from_fn(|| q.pop()).map(|e| text(&e)).collect();
        let a: String = (0..1000).map(|i: i32| i.to_string().chars().next().unwrap()).collect();
        assert_eq!(
            out,
            [format!("a:{a}"), format!("b:{}y", "x".repeat(1000)), "a:subagent/turn".into(), "a:next".into()]
        );
        // Taken items are not coalesced into.
        q.push(delta("a", 2, "one"));
        assert_eq!(q.pop().map(|e| text(&e)).as_deref(), Some("a:one"));
        q.push(delta("a", 2, "two"));
        assert_eq!(q.pop().map(|e| text(&e)).as_deref(), Some("a:two"));
    }

    #[test]
    fn a_reader_past_its_buffer_is_cut_off_with_a_reason_and_nothing_held() {
        let mut q = Queue::new(64 << 10);
        // Deltas coalesce: a member's streamed text costs its latest bytes, not every part.
        for _ in 0..1000 {
            q.push(delta("a", 1, "0123456789"));
        }
        assert_eq!(q.len(), 1);
        // Other events are each kept, in order, until they pass the buffer.
        let mut pushed = 0;
        while q.failed.is_none() {
            q.push(turn_end("b"));
            pushed += 1;
            assert!(pushed < 1000, "the buffer was never bounded");
        }
        assert!(pushed > 100, "{pushed} events of 256 bytes beside a 64 KiB buffer");
        assert_eq!((q.len(), q.bytes, q.closed), (0, 0, true), "what it held is dropped");
        let e = q.failed.take().unwrap();
        assert_eq!(e.code, crate::ErrorCode::LimitExceeded);
        assert!(e.message.contains("past its bufferBytes (65536)"), "{}", e.message);
        q.push(turn_end("b"));
        assert_eq!(q.len(), 0, "a closed queue takes nothing");
        // Taking events gives their room back.
        let mut q = Queue::new(64 << 10);
        for _ in 0..10_000 {
            q.push(turn_end("b"));
            q.pop().unwrap();
        }
        assert!(q.failed.is_none() && q.bytes == 0);
    }

    #[test]
    fn a_coalesced_text_keeps_its_latest_bytes() {
        let mut q = Queue::default();
        let chunk = "é".repeat(40_000); // 80,000 bytes
        for _ in 0..20 {
            q.push(delta("a", 1, &chunk));
        }
        q.push(delta("a", 1, "end"));
        let Some(RuntimeEvent::Delta { part, .. }) = q.pop() else { panic!() };
        assert!(part.text.len() <= MAX_COALESCED_BYTES && part.text.ends_with("éend"));
    }
}
