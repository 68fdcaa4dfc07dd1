//! The module's heap limit (`core::heap`): with the counting allocator
//! installed, input past `heapBytes` is refused `LIMIT_EXCEEDED` whatever the
//! queue limits allow, and the runtime answers again once a turn frees it.
//! One test in its own binary: the count is the process's.
#![cfg(not(target_arch = "wasm32"))]

mod runtime_support;

use runtime_support::Harness;
use subagent_tree::core::heap;
use subagent_tree::json::Value;
use subagent_tree::{ActivationSpec, ErrorCode, RuntimeOptions, Signal};

#[global_allocator]
static ALLOCATOR: heap::Counting<std::alloc::System> = heap::Counting(std::alloc::System);

#[test]
fn input_past_the_heap_limit_is_refused_and_room_returns_when_a_turn_takes_it() {
    // Queue limits at their highest: only the heap limit can stop the input.
    let limits = subagent_tree::core::limits::Limits {
        member_queue_bytes: 1 << 30,
        queue_bytes: (1 << 31) - 1,
        ..Default::default()
    };
    let h = Harness::new(RuntimeOptions { max_depth: 4, capacity: 32, limits, ..RuntimeOptions::default() });
    let root = h.root();
    h.host.hold("busy");
    let spec = ActivationSpec::new("spawn", &root, "a task", "please do it").named("busy");
    let rt = h.rt.clone();
    let busy = h.run(async move { rt.start_activation(spec).await }).unwrap();
    h.settle();
    assert!(heap::used() > 0, "the counting allocator counts");
    heap::set_limit(heap::used() + (32 << 20)).unwrap();
    let send = |mib: usize| {
        let (rt, r, id) = (h.rt.clone(), root.clone(), busy.child_id.clone());
        let text = Value::from("x".repeat((mib << 20) - 64));
        h.run(async move { rt.send_message(&r, &id, text, &Signal::never()).await })
    };
    let mut accepted = 0;
    let refused = loop {
        match send(1) {
            Ok(_) => accepted += 1,
            Err(e) => break e,
        }
        assert!(accepted < 64, "the heap was never bounded");
    };
    assert!(accepted >= 4, "only {accepted} messages of 1 MiB fit in 32 MiB: {}", refused.message);
    assert_eq!(refused.code, ErrorCode::LimitExceeded);
    assert!(refused.message.contains("the limit heapBytes is"), "{}", refused.message);
    // The runtime answers: busy's turn ends, the next takes the queue, its
    // log is the store's (kept), and the messages' copies in the inbox are freed.
    h.host.open("busy");
    h.settle();
    heap::set_limit(heap::used() + (4 << 20)).unwrap();
    send(1).unwrap();
    h.settle();
    assert_eq!(
        heap::set_limit(1).unwrap_err().message,
        format!("heapBytes must be from {} to {}, not 1", heap::MIN_HEAP_BYTES, heap::MAX_HEAP_BYTES)
    );
    heap::set_limit(heap::DEFAULT_HEAP_BYTES).unwrap();
}
