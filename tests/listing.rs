//! Descendant listing and name resolution (seed 003 "Durable enumeration",
//! seed 000 "Agent names" and the listDescendants/resolveName JSDoc), run
//! against `MemoryStore::new()` (read_many) and `MemoryStore::without_batch()`
//! with identical logs. One test per seed sentence.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::*;
use std::rc::Rc;
use subagent_tree::catalog;
use subagent_tree::exec::{block_on, yield_now, LocalExecutor};
use subagent_tree::store::StoreStats;
use subagent_tree::{list_descendants, resolve_name, ErrorCode, Result, Row, Signal, Store};

const ROOT: &str = "root";

fn child<'a>(rows: &'a [Row], id: &str) -> &'a subagent_tree::ChildRow {
    rows.iter()
        .find_map(|r| match r {
            Row::Child(c) if c.id == id => Some(c),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no child row {id} in {:#?}", render(rows)))
}

fn resolve<S: Store + 'static>(store: &Rc<S>, text: &str) -> Result<String> {
    let (store, text) = (store.clone(), text.to_owned());
    block_on(async move { resolve_name(&*store, ROOT, &text, &Signal::never()).await })
}

// ---------------------------------------------------------------------------
// Listing: shape of the rows

/// "recursively calls the same catalog reader in stable pre-order, preserving
/// each parent's event order" (catalog order among siblings, not creation time
/// or id order; other event types interleaved are ignored).
#[test]
fn stable_pre_order_with_catalog_order_among_siblings() {
    let mut t = Tree::new();
    t.noise(ROOT)
        .add(ROOT, serde_json::json!({"version":3,"childId":"zz","childCreatedAt":9,"mode":"continuable","label":"l","name":"zulu"}))
        .noise(ROOT)
        .add(ROOT, serde_json::json!({"version":3,"childId":"aa","childCreatedAt":1,"mode":"one-shot","name":"alpha"}))
        .add("zz", v3("z2", "one-shot", "two"))
        .noise("zz")
        .add("zz", v3("z1", "one-shot", "one"))
        .add("aa", v3("a1", "continuable", "one"))
        .add("z2", v3("z2x", "external", "x"));
    let rows = list_both(&t, ROOT);
    assert_rows(
        &rows,
        &[
            "zz <root continuable name=zulu path=zulu +",
            "  z2 <zz one-shot name=two path=zulu/two +",
            "    z2x <z2 external name=x path=zulu/two/x",
            "  z1 <zz one-shot name=one path=zulu/one",
            "aa <root one-shot name=alpha path=alpha +",
            "  a1 <aa continuable name=one path=alpha/one",
        ],
    );
    // Listing twice gives the same rows (stable).
    assert_eq!(list_both(&t, ROOT), rows);
}

/// "Each row carries its catalog parent and root-relative depth; direct children are 1."
#[test]
fn rows_carry_catalog_parent_and_root_relative_depth() {
    let mut t = Tree::new();
    t.add(ROOT, v3("c1", "continuable", "one"))
        .add("c1", v3("c2", "continuable", "two"))
        .add("c2", v3("c3", "one-shot", "three"))
        .add("c3", v3("c4", "continuable", "four"))
        .add(ROOT, v3("d1", "continuable", "dee"));
    let rows = list_both(&t, ROOT);
    let got: Vec<(&str, &str, u32)> = rows.iter().map(|r| (r.id(), r.parent_id(), r.depth())).collect();
    assert_eq!(got, [("c1", ROOT, 1), ("c2", "c1", 2), ("c3", "c2", 3), ("c4", "c3", 4), ("d1", ROOT, 1)]);
}

/// "listDescendants() recursively reads those catalogs and derives hasChildren
/// from each child catalog."
#[test]
fn has_children_is_derived_from_each_child_catalog() {
    let mut t = Tree::new();
    t.add(ROOT, v3("parent", "continuable", "parent"))
        .add("parent", v3("kid", "one-shot", "kid"))
        .add(ROOT, v3("empty", "continuable", "empty"))
        .add(ROOT, v3("chatty", "continuable", "chatty"))
        .noise("chatty")
        .noise("chatty")
        .add(ROOT, v3("ext", "external", "ext"))
        .add(ROOT, v0("oneshot", "one-shot"))
        .add("oneshot", v3("deep", "one-shot", "deep"));
    let rows = list_both(&t, ROOT);
    assert!(child(&rows, "parent").has_children);
    assert!(!child(&rows, "kid").has_children);
    assert!(!child(&rows, "empty").has_children, "an existing session with no catalog events");
    assert!(!child(&rows, "chatty").has_children, "other event types are not children");
    assert!(!child(&rows, "ext").has_children);
    assert!(child(&rows, "oneshot").has_children);
}

/// "Slash-separated names from the requested root" (seed 000): `name` is the
/// entry's own name, `path` the full name without a `lead/` prefix.
#[test]
fn named_members_carry_name_and_full_path() {
    let mut t = Tree::new();
    t.add(ROOT, v3("r", "continuable", "reviewer"))
        .add("r", v3("c", "continuable", "checker"))
        .add("c", v3("e", "external", "linter"));
    let rows = list_both(&t, ROOT);
    assert_rows(
        &rows,
        &[
            "r <root continuable name=reviewer path=reviewer +",
            "  c <r continuable name=checker path=reviewer/checker +",
            "    e <c external name=linter path=reviewer/checker/linter",
        ],
    );
}

/// "absent when this child or an ancestor below the root has no name": an
/// unnamed v0, v1 or v2 member breaks the path for itself and everything below.
#[test]
fn an_unnamed_historical_member_breaks_the_path_below_it() {
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha"))
        .add("a", v0("x0", "continuable"))
        .add("x0", v3("y", "continuable", "yankee"))
        .add("y", v3("z", "one-shot", "zulu"))
        .add("a", v1("x1", "one-shot"))
        .add("x1", v3("w", "one-shot", "whiskey"))
        .add("a", v2_external("x2"))
        .add("a", v3("b", "continuable", "bravo"));
    let rows = list_both(&t, ROOT);
    assert_rows(
        &rows,
        &[
            "a <root continuable name=alpha path=alpha +",
            "  x0 <a continuable +",
            "    y <x0 continuable name=yankee +",
            "      z <y one-shot name=zulu",
            "  x1 <a one-shot +",
            "    w <x1 one-shot name=whiskey",
            "  x2 <a external",
            "  b <a continuable name=bravo path=alpha/bravo",
        ],
    );
}

/// An unknown-mode entry (v1, no name) also breaks the path below it.
#[test]
fn an_unknown_mode_member_breaks_the_path_below_it() {
    let mut t = Tree::new();
    t.add(ROOT, v1_unknown("u")).add("u", v3("n", "continuable", "named")).add("n", v3("m", "one-shot", "more"));
    let rows = list_both(&t, ROOT);
    assert_rows(&rows, &["u <root !unsupported", "  n <u continuable name=named +", "    m <n one-shot name=more"]);
}

/// Depth and path are relative to the *requested* root: listing from a
/// descendant gives paths from it, and an unnamed member above it does not matter.
#[test]
fn listing_from_a_non_root_session_is_relative_to_it() {
    let mut t = Tree::new();
    t.add(ROOT, v0("hist", "continuable"))
        .add("hist", v3("a", "continuable", "alpha"))
        .add("a", v3("b", "continuable", "bravo"))
        .add("b", v3("c", "one-shot", "charlie"));
    let rows = list_both(&t, "hist");
    assert_rows(
        &rows,
        &[
            "a <hist continuable name=alpha path=alpha +",
            "  b <a continuable name=bravo path=alpha/bravo +",
            "    c <b one-shot name=charlie path=alpha/bravo/charlie",
        ],
    );
    let rows = list_both(&t, "a");
    assert_rows(
        &rows,
        &["b <a continuable name=bravo path=bravo +", "  c <b one-shot name=charlie path=bravo/charlie"],
    );
}

// ---------------------------------------------------------------------------
// Listing: modes

/// "External entries are leaves without local Sessions" and are never read,
/// even when a session with that id exists and has a catalog.
#[test]
fn external_entries_are_leaves_and_never_read() {
    let mut t = Tree::new();
    t.add(ROOT, v2_external("e2"))
        .add(ROOT, v3("e3", "external", "ext"))
        .add(ROOT, v3("local", "continuable", "local"))
        .add("local", v3("e4", "external", "inner"))
        // Sessions that happen to carry the external ids, with catalogs: must stay unread.
        .add("e2", v3("hidden2", "continuable", "hidden"))
        .add("e3", v3("hidden3", "continuable", "hidden"))
        .add("e4", v3("hidden4", "continuable", "hidden"));
    let rows = list_both(&t, ROOT);
    assert_rows(
        &rows,
        &[
            "e2 <root external",
            "e3 <root external name=ext path=ext",
            "local <root continuable name=local path=local +",
            "  e4 <local external name=inner path=local/inner",
        ],
    );
    for (label, batch) in STRATEGIES {
        let store = Rc::new(TestStore::new(t.store(batch)));
        list(&store, ROOT).unwrap();
        let reads = store.reads_per_session();
        for id in ["e2", "e3", "e4", "hidden2", "hidden3", "hidden4"] {
            assert_eq!(reads.get(id), None, "{label}: {id} was read");
        }
    }
}

/// "One-shot ... entries remain traversal nodes" (v0, v1 and v3 one-shot).
#[test]
fn one_shot_entries_are_traversed() {
    let mut t = Tree::new();
    t.add(ROOT, v0("o0", "one-shot"))
        .add("o0", v3("k0", "one-shot", "kid"))
        .add(ROOT, v1("o1", "one-shot"))
        .add("o1", v3("k1", "one-shot", "kid"))
        .add(ROOT, v3("o3", "one-shot", "once"))
        .add("o3", v3("k3", "continuable", "kid"))
        .add("k3", v3("g3", "one-shot", "grand"));
    let rows = list_both(&t, ROOT);
    assert_rows(
        &rows,
        &[
            "o0 <root one-shot +",
            "  k0 <o0 one-shot name=kid",
            "o1 <root one-shot +",
            "  k1 <o1 one-shot name=kid",
            "o3 <root one-shot name=once path=once +",
            "  k3 <o3 continuable name=kid path=once/kid +",
            "    g3 <k3 one-shot name=grand path=once/kid/grand",
        ],
    );
}

/// "unknown modes produce unsupported diagnostics" and "remain traversal nodes".
#[test]
fn unknown_mode_entries_are_unsupported_diagnostics_and_still_traversed() {
    let mut t = Tree::new();
    t.add(ROOT, v3("before", "continuable", "before"))
        .add(ROOT, v1_unknown("u"))
        .add("u", v3("uk", "continuable", "kid"))
        .add("uk", v1_unknown("u2"))
        .add("u2", v0("deep", "one-shot"))
        .add(ROOT, v3("after", "continuable", "after"));
    let rows = list_both(&t, ROOT);
    assert_rows(
        &rows,
        &[
            "before <root continuable name=before path=before",
            "u <root !unsupported",
            "  uk <u continuable name=kid +",
            "    u2 <uk !unsupported",
            "      deep <u2 one-shot",
            "after <root continuable name=after path=after",
        ],
    );
    assert!(matches!(&rows[1], Row::Diagnostic(d) if d.depth == 1 && d.parent_id == ROOT));
}

// ---------------------------------------------------------------------------
// Listing: branch diagnostics

/// "An unreadable child catalog produces ... unavailable and stops only that
/// branch": a child whose session does not exist.
#[test]
fn a_missing_child_session_is_unavailable_and_stops_only_its_branch() {
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha"))
        .add("a", v3("gone", "continuable", "gone"))
        .add("a", v3("a2", "continuable", "second"))
        .add(ROOT, v3("m", "continuable", "missing"))
        .add(ROOT, v3("c", "continuable", "charlie"))
        .add("c", v3("c1", "one-shot", "cousin"))
        .drop_session("gone")
        .drop_session("m");
    let rows = list_both(&t, ROOT);
    assert_rows(
        &rows,
        &[
            "a <root continuable name=alpha path=alpha +",
            "  gone <a !unavailable",
            "  a2 <a continuable name=second path=alpha/second",
            "m <root !unavailable",
            "c <root continuable name=charlie path=charlie +",
            "  c1 <c one-shot name=cousin path=charlie/cousin",
        ],
    );
}

/// A catalog entry that does not decode is one `corrupt` row carrying its
/// event's `seq` and why (its `childId` as the row's id when that reads, else
/// the empty id, which no Session has): the rest of its catalog, before and
/// after it, is listed, and the bad entry's child is never read.
#[test]
fn a_bad_catalog_entry_is_one_corrupt_row_and_the_rest_lists() {
    let bad_payloads = [
        (serde_json::json!({"version":3,"childId":"q","childCreatedAt":1,"mode":"continuable","label":"l"}), "q"),
        (serde_json::json!({"version":0,"childId":"q","childCreatedAt":1,"mode":"one-shot","extra":true}), "q"),
        (serde_json::json!({"version":4,"childId":"q","childCreatedAt":1,"mode":"one-shot"}), "q"),
        (serde_json::json!({"version":3,"childId":"q","childCreatedAt":1,"mode":"external","name":"lead"}), "q"),
        (serde_json::json!({"version":2,"childId":"q","childCreatedAt":1,"mode":"one-shot"}), "q"),
        (
            serde_json::json!({"version":3,"childId":"q","name":"z","$damaged":"event [2].payload.label is ill-formed"}),
            "q",
        ),
        (serde_json::json!({"$damaged":"event [2].payload.childId is ill-formed"}), ""),
        (serde_json::json!({"version":0,"childId":"","childCreatedAt":1,"mode":"one-shot"}), ""),
        (serde_json::json!("not an object"), ""),
        (serde_json::json!(null), ""),
    ];
    for (bad, id) in bad_payloads {
        let mut t = Tree::new();
        t.add(ROOT, v3("a", "continuable", "alpha"))
            .add("a", v3("k", "continuable", "broken"))
            .add("k", v3("shown", "continuable", "shown"))
            .push("k", subagent_tree::event::CATALOG, bad.clone())
            .add("k", v3("after", "one-shot", "after"))
            .add("q", v3("hidden", "continuable", "hidden"))
            .add("a", v3("a2", "continuable", "sibling"))
            .add(ROOT, v3("c", "continuable", "charlie"))
            .add("c", v3("c1", "one-shot", "cousin"));
        let rows = list_both(&t, ROOT);
        let corrupt = format!("    {id} <k !corrupt@2");
        assert_rows(
            &rows,
            &[
                "a <root continuable name=alpha path=alpha +",
                "  k <a continuable name=broken path=alpha/broken +",
                "    shown <k continuable name=shown path=alpha/broken/shown",
                &corrupt,
                "    after <k one-shot name=after path=alpha/broken/after",
                "  a2 <a continuable name=sibling path=alpha/sibling",
                "c <root continuable name=charlie path=charlie +",
                "  c1 <c one-shot name=cousin path=charlie/cousin",
            ],
        );
        let Some(Row::Diagnostic(d)) = rows.get(3) else { panic!("{bad}") };
        let (_, detail) = d.entry.as_ref().unwrap();
        assert!(detail.starts_with("event 2: "), "{detail}");
        if bad.get("$damaged").is_some() {
            assert!(detail.starts_with("event 2: damaged in the store: event [2].payload."), "{detail}");
        }
    }
}

/// "An unreadable child catalog produces corrupt ... and stops only that
/// branch": a child whose own `session/start` is damaged cannot show whose
/// member it is, so its whole branch is one `corrupt` row.
#[test]
fn a_damaged_session_start_makes_its_branch_corrupt() {
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha")).add(ROOT, v3("b", "continuable", "bravo"));
    t.drop_session("a")
        .push(
            "a",
            subagent_tree::event::SESSION_START,
            serde_json::json!({"$damaged":"event [0].payload.parentId is ill-formed"}),
        )
        .add("a", v3("hidden", "continuable", "hidden"));
    assert_rows(&list_both(&t, ROOT), &["a <root !corrupt", "b <root continuable name=bravo path=bravo"]);
}

/// "Query failures propagate" only for the root; a child read that fails is
/// `unavailable` for that branch, under both read strategies.
#[test]
fn a_failing_child_read_is_unavailable_and_stops_only_its_branch() {
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha"))
        .add("a", v3("f", "continuable", "fails"))
        .add("f", v3("under", "continuable", "under"))
        .add("a", v3("a2", "continuable", "sibling"))
        .add(ROOT, v3("c", "continuable", "charlie"))
        .add("c", v3("c1", "one-shot", "cousin"));
    for (label, batch) in STRATEGIES {
        let store = Rc::new(TestStore::new(t.store(batch)).failing(&["f"]));
        let rows = list(&store, ROOT).unwrap_or_else(|e| panic!("{label}: {e}"));
        check_invariants(&rows, ROOT, label);
        assert_rows(
            &rows,
            &[
                "a <root continuable name=alpha path=alpha +",
                "  f <a !unavailable",
                "  a2 <a continuable name=sibling path=alpha/sibling",
                "c <root continuable name=charlie path=charlie +",
                "  c1 <c one-shot name=cousin path=charlie/cousin",
            ],
        );
        assert_eq!(store.reads_per_session().get("under"), None, "{label}: below a failed read");
    }
}

/// A store error that happens to carry the CANCELLED code, while the caller's
/// signal is not aborted, is a failed child read: `unavailable`, not a
/// cancelled listing ("cancellation" means the caller's).
#[test]
fn a_child_read_failing_with_a_stray_cancelled_code_is_unavailable() {
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha")).add(ROOT, v3("b", "continuable", "bravo"));
    for (label, batch) in STRATEGIES {
        let store = Rc::new(TestStore::new(t.store(batch)).failing_with(ErrorCode::Cancelled, &["a"]));
        let rows = list(&store, ROOT).unwrap_or_else(|e| panic!("{label}: listing rejected: {e}"));
        assert_rows(&rows, &["a <root !unavailable", "b <root continuable name=bravo path=bravo"]);
    }
}

/// A batch read that fails as a whole leaves every branch of that level
/// unavailable; the levels above are still listed.
#[test]
fn a_whole_failed_batch_makes_that_level_unavailable() {
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha")).add("a", v3("b", "continuable", "bravo"));
    let store = Rc::new(TestStore::new(t.store(true)).failing_batches());
    let rows = list(&store, ROOT).unwrap();
    assert_rows(&rows, &["a <root !unavailable"]);
}

// ---------------------------------------------------------------------------
// Listing: repeated ids, cycles, reads

/// "repeated ids ... are skipped": a duplicate entry in one catalog (which the
/// projection keeps) is listed once, with its first entry's fields.
#[test]
fn duplicates_in_one_catalog_are_listed_once() {
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha"))
        .add(ROOT, v3("b", "continuable", "bravo"))
        .add(ROOT, v3("a", "one-shot", "again"))
        .add("a", v3("a1", "one-shot", "kid"));
    let projected = catalog::project_log(t.log(ROOT)).unwrap();
    assert_eq!(projected.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), ["a", "b", "a"], "projection keeps it");
    let rows = list_both(&t, ROOT);
    assert_rows(
        &rows,
        &[
            "a <root continuable name=alpha path=alpha +",
            "  a1 <a one-shot name=kid path=alpha/kid",
            "b <root continuable name=bravo path=bravo",
        ],
    );
}

/// Repeated ids across branches: the first *pre-order* occurrence wins, even
/// when breadth-first reading meets the id on another branch first, and the
/// two read strategies agree.
#[test]
fn repeated_ids_across_branches_keep_the_first_pre_order_occurrence() {
    // x sits at depth 3 under a/c, and at depth 1 directly under the root (later in pre-order).
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha"))
        .add("a", v3("c", "continuable", "charlie"))
        .add("c", v3("x", "continuable", "xray"))
        .add("x", v3("x1", "one-shot", "kid"))
        .add(ROOT, v3("x", "continuable", "shallow"));
    let rows = list_both(&t, ROOT);
    assert_rows(
        &rows,
        &[
            "a <root continuable name=alpha path=alpha +",
            "  c <a continuable name=charlie path=alpha/charlie +",
            "    x <c continuable name=xray path=alpha/charlie/xray +",
            "      x1 <x one-shot name=kid path=alpha/charlie/xray/kid",
        ],
    );
    // A diamond: b's copy of d is later in pre-order and skipped; b has no children left.
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha"))
        .add("a", v3("d", "continuable", "delta"))
        .add(ROOT, v3("b", "continuable", "bravo"))
        .add("b", v3("d", "continuable", "delta"))
        .add("d", v3("d1", "one-shot", "kid"));
    let rows = list_both(&t, ROOT);
    assert_rows(
        &rows,
        &[
            "a <root continuable name=alpha path=alpha +",
            "  d <a continuable name=delta path=alpha/delta +",
            "    d1 <d one-shot name=kid path=alpha/delta/kid",
            "b <root continuable name=bravo path=bravo",
        ],
    );
}

/// "repeated ids and cycles are skipped": a child listing the root, a
/// grandchild listing its ancestor, and a session listing itself.
#[test]
fn cycles_are_skipped() {
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha"))
        .add("a", v3(ROOT, "continuable", "root-again"))
        .add("a", v3("b", "continuable", "bravo"))
        .add("b", v3("a", "continuable", "alpha-again"))
        .add("b", v3("b", "continuable", "self"))
        .add("b", v3("c", "one-shot", "charlie"))
        .add("c", v3(ROOT, "one-shot", "root-again"));
    let rows = list_both(&t, ROOT);
    assert_rows(
        &rows,
        &[
            "a <root continuable name=alpha path=alpha +",
            "  b <a continuable name=bravo path=alpha/bravo +",
            "    c <b one-shot name=charlie path=alpha/bravo/charlie",
        ],
    );
    for (label, batch) in STRATEGIES {
        let store = Rc::new(TestStore::new(t.store(batch)));
        list(&store, ROOT).unwrap();
        assert!(store.reads_per_session().values().all(|&n| n == 1), "{label}: {:?}", store.reads_per_session());
    }
}

/// A tree with every complication at once, for the read-count tests.
fn tangled_tree() -> Tree {
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha"))
        .add(ROOT, v3("b", "one-shot", "bravo"))
        .add(ROOT, v3("e", "external", "ext"))
        .add(ROOT, v3("a", "continuable", "alpha"))
        .add("a", v3("a1", "continuable", "one"))
        .add("a", v0("a2", "continuable"))
        .add("a", v3(ROOT, "continuable", "cycle"))
        .add("b", v3("a1", "continuable", "repeat"))
        .add("b", v1_unknown("u"))
        .add("b", v3("gone", "continuable", "gone"))
        .add("u", v3("u1", "one-shot", "under"))
        .add("a1", v3("deep", "one-shot", "deep"))
        .add("deep", v3("a", "one-shot", "cycle"))
        .drop_session("gone");
    // Sessions no reachable catalog names: an ordinary fork of the root, and its subagent.
    t.fork(ROOT, "root-fork").add("root-fork", v3("fork-kid", "continuable", "kid"));
    t.add("e", v3("behind-external", "continuable", "x"));
    t
}

/// "Each reachable catalog is observed once"; "Sessions absent from reachable
/// catalogs are not discovered, including ordinary Session forks and any
/// subagents below those forks"; external children are never read.
#[test]
fn each_reachable_catalog_is_read_exactly_once() {
    let t = tangled_tree();
    let rows = list_both(&t, ROOT);
    assert_rows(
        &rows,
        &[
            "a <root continuable name=alpha path=alpha +",
            "  a1 <a continuable name=one path=alpha/one +",
            "    deep <a1 one-shot name=deep path=alpha/one/deep",
            "  a2 <a continuable",
            "b <root one-shot name=bravo path=bravo +",
            "  u <b !unsupported",
            "    u1 <u one-shot name=under",
            "  gone <b !unavailable",
            "e <root external name=ext path=ext",
        ],
    );
    let reachable = [ROOT, "a", "b", "a1", "a2", "u", "gone", "deep", "u1"];
    for (label, batch) in STRATEGIES {
        let store = Rc::new(TestStore::new(t.store(batch)));
        list(&store, ROOT).unwrap();
        let reads = store.reads_per_session();
        for id in reachable {
            assert_eq!(reads.get(id), Some(&1), "{label}: reads of {id}: {reads:?}");
        }
        assert_eq!(reads.len(), reachable.len(), "{label}: unexpected reads {reads:?}");
    }
}

/// With read_many, listing costs one round trip per depth level (plus the
/// root's own read); without it, one read per reachable catalog.
#[test]
fn read_many_costs_exactly_one_round_trip_per_depth_level() {
    let t = tangled_tree();
    // Levels of non-external members: {a, b}, {a1, a2, u, gone}, {deep, u1}; then no more.
    let store = Rc::new(t.store(true));
    list(&store, ROOT).unwrap();
    assert_eq!(store.stats(), StoreStats { appends: 0, reads: 1, read_manys: 3 });
    let store = Rc::new(TestStore::new(t.store(true)));
    list(&store, ROOT).unwrap();
    assert_eq!(
        *store.calls.borrow(),
        [
            Call::Read(ROOT.into()),
            Call::ReadMany(vec!["a".into(), "b".into()]),
            Call::ReadMany(vec!["a1".into(), "a2".into(), "u".into(), "gone".into()]),
            Call::ReadMany(vec!["deep".into(), "u1".into()]),
        ]
    );
    let store = Rc::new(t.store(false));
    list(&store, ROOT).unwrap();
    assert_eq!(store.stats(), StoreStats { appends: 0, reads: 9, read_manys: 0 });

    // A wide, deep tree: 3 levels of fan-out 4 = 84 members, still 1 + 3 round trips.
    let mut t = Tree::new();
    let mut level = vec![ROOT.to_owned()];
    for depth in 1..=3 {
        let mut next = Vec::new();
        for parent in &level {
            for i in 0..4 {
                let id = format!("{parent}.{i}");
                t.add(parent, v3(&id, "continuable", &format!("n{depth}-{i}")));
                next.push(id);
            }
        }
        level = next;
    }
    let store = Rc::new(t.store(true));
    assert_eq!(list(&store, ROOT).unwrap().len(), 84);
    assert_eq!(store.stats(), StoreStats { appends: 0, reads: 1, read_manys: 3 });
    let store = Rc::new(t.store(false));
    assert_eq!(list(&store, ROOT).unwrap().len(), 84);
    assert_eq!(store.stats(), StoreStats { appends: 0, reads: 85, read_manys: 0 });
}

/// Without read_many, the reads of one level overlap, up to
/// MAX_CONCURRENT_READS at once, issued in level order: a level of at most
/// that many members costs one round trip, as with read_many.
#[test]
fn without_read_many_the_reads_of_a_level_overlap_up_to_a_bound() {
    use std::cell::{Cell, RefCell};
    use subagent_tree::exec::LocalBoxFuture;
    use subagent_tree::listing::MAX_CONCURRENT_READS;
    use subagent_tree::store::ReadResult;
    use subagent_tree::ReadQuery;
    struct Slow {
        inner: subagent_tree::MemoryStore,
        in_flight: Cell<usize>,
        peaks: RefCell<Vec<usize>>,
        order: RefCell<Vec<String>>,
    }
    impl Store for Slow {
        fn append<'a>(&'a self, s: &'a str, e: Vec<subagent_tree::SessionEvent>) -> LocalBoxFuture<'a, Result<()>> {
            self.inner.append(s, e)
        }
        fn read<'a>(&'a self, s: &'a str, q: &'a ReadQuery) -> LocalBoxFuture<'a, ReadResult> {
            Box::pin(async move {
                self.order.borrow_mut().push(s.to_owned());
                self.in_flight.set(self.in_flight.get() + 1);
                self.peaks.borrow_mut().push(self.in_flight.get());
                for _ in 0..3 {
                    yield_now().await;
                }
                self.in_flight.set(self.in_flight.get() - 1);
                Ok(self.inner.read_now(s, q))
            })
        }
    }
    // Levels of 10, 100 and 1,000 members.
    let mut t = Tree::new();
    let mut level = vec![ROOT.to_owned()];
    let mut order = vec![ROOT.to_owned()];
    for depth in 1..=3 {
        let mut next = Vec::new();
        for parent in &level {
            for i in 0..10 {
                let id = format!("{parent}.{i}");
                t.add(parent, v3(&id, "continuable", &format!("n{depth}-{i}")));
                next.push(id);
            }
        }
        order.extend(next.iter().cloned());
        level = next;
    }
    let store = Rc::new(Slow {
        inner: t.store(false),
        in_flight: Cell::new(0),
        peaks: RefCell::default(),
        order: RefCell::default(),
    });
    let rows = list(&store, ROOT).unwrap();
    assert_eq!(rows, list(&Rc::new(t.store(true)), ROOT).unwrap());
    assert_eq!(rows.len(), 1110);
    // Each catalog once, breadth-first, in level order.
    assert_eq!(*store.order.borrow(), order);
    let peaks = store.peaks.borrow();
    let peak = |range: std::ops::Range<usize>| peaks[range].iter().copied().max().unwrap();
    assert_eq!(peak(0..1), 1, "the root alone");
    assert_eq!(peak(1..11), 10, "all ten of level 1 at once");
    assert_eq!(peak(11..111), MAX_CONCURRENT_READS, "level 2: bounded");
    assert_eq!(peak(111..1111), MAX_CONCURRENT_READS, "level 3: bounded");
    assert_eq!(store.in_flight.get(), 0);
}

/// Fork isolation: a fork's log starts with its parent's prefix (catalog
/// events included), then `session/start {inheritedEventCount: k}` at seq k.
/// Only the fork's own catalog events are its children.
#[test]
fn fork_inherited_catalog_events_are_ignored() {
    let mut t = Tree::new();
    t.add(ROOT, v3("old", "continuable", "old")).add("old", v3("old-kid", "one-shot", "kid"));
    t.fork(ROOT, "fork").add("fork", v3("own", "continuable", "own")).noise("fork");
    // Listing from the fork: the inherited `old` is not its child.
    let rows = list_both(&t, "fork");
    assert_rows(&rows, &["own <fork continuable name=own path=own"]);
    // A fork that is itself cataloged as a child: its row has only its own children.
    let mut t2 = t.clone();
    t2.add(ROOT, v3("fork", "continuable", "forked"));
    let rows = list_both(&t2, ROOT);
    assert_rows(
        &rows,
        &[
            "old <root continuable name=old path=old +",
            "  old-kid <old one-shot name=kid path=old/kid",
            "fork <root continuable name=forked path=forked +",
            "  own <fork continuable name=own path=forked/own",
        ],
    );
    // A fork with no own children has none, although its prefix lists one.
    let mut t3 = Tree::new();
    t3.add(ROOT, v3("old", "continuable", "old"));
    t3.fork(ROOT, "bare");
    assert!(list_both(&t3, "bare").is_empty());
    // A corrupt catalog event inside the inherited prefix is not the fork's.
    let mut t4 = Tree::new();
    t4.push(ROOT, subagent_tree::event::CATALOG, serde_json::json!({"version": 9}));
    t4.fork(ROOT, "f").add("f", v3("kid", "one-shot", "kid"));
    assert_rows(&list_both(&t4, "f"), &["kid <f one-shot name=kid path=kid"]);
}

// ---------------------------------------------------------------------------
// Listing: the root and cancellation

/// "Root read failures ... reject the listing" with the store's own error.
#[test]
fn a_root_read_failure_rejects() {
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha"));
    for (label, batch) in STRATEGIES {
        let store = Rc::new(TestStore::new(t.store(batch)).failing(&[ROOT]));
        let err = list(&store, ROOT).expect_err(label);
        assert_eq!(err.code, ErrorCode::PersistenceUnavailable, "{label}: {err}");
        assert!(err.message.contains("disk error reading root"), "{label}: {err}");
        assert_eq!(store.round_trips(), 1, "{label}: nothing read after the root failed");
    }
}

/// A bad entry in the root's catalog is one `corrupt` row like any other:
/// the root's read succeeded, so the listing does not reject.
#[test]
fn a_bad_root_catalog_entry_is_one_row() {
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha"))
        .push(
            ROOT,
            subagent_tree::event::CATALOG,
            serde_json::json!({"version":3,"childId":"b","childCreatedAt":1,"mode":"one-shot","name":"Bad"}),
        )
        .add(ROOT, v3("c", "continuable", "charlie"));
    for (label, batch) in STRATEGIES {
        let store = Rc::new(t.store(batch));
        let rows = list(&store, ROOT).expect(label);
        assert_rows(
            &rows,
            &[
                "a <root continuable name=alpha path=alpha",
                "b <root !corrupt@2",
                "c <root continuable name=charlie path=charlie",
            ],
        );
    }
}

/// A root with no log (or a log without catalog events) has no descendants.
#[test]
fn a_root_with_no_log_lists_nothing() {
    let t = Tree::new();
    assert!(list_both(&t, ROOT).is_empty());
    let mut t = Tree::new();
    t.session(ROOT).noise(ROOT);
    assert!(list_both(&t, ROOT).is_empty());
}

/// "cancellation reject[s] the listing": a signal aborted before the call.
#[test]
fn cancellation_before_listing_rejects() {
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha"));
    for (label, batch) in STRATEGIES {
        let store = Rc::new(TestStore::new(t.store(batch)));
        let signal = Signal::new();
        signal.abort();
        let s = store.clone();
        let err = block_on(async move { list_descendants(&*s, ROOT, &signal).await }).expect_err(label);
        assert_eq!(err.code, ErrorCode::Cancelled, "{label}: {err}");
        assert_eq!(store.stats(), StoreStats::default(), "{label}: the store did no read");
    }
}

/// Cancellation while a read is in flight: the store never answers, another
/// task aborts the signal, and the listing rejects with CANCELLED instead of
/// hanging — whether the stalled read is the root's, a child's or a batch.
#[test]
fn cancellation_during_listing_rejects() {
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha"))
        .add(ROOT, v3("b", "continuable", "bravo"))
        .add("a", v3("a1", "continuable", "one"));
    for stalled in [ROOT, "a", "b", "a1"] {
        for (label, batch) in STRATEGIES {
            let store = Rc::new(TestStore::new(t.store(batch)).stalling(&[stalled]));
            let exec = LocalExecutor::new();
            let signal = Signal::new();
            // Without the abort, the listing stalls.
            let (s, sig) = (store.clone(), signal.clone());
            assert!(
                exec.run_until(async move { list_descendants(&*s, ROOT, &sig).await }).is_none(),
                "{label}/{stalled}: the stalled read must hold the listing"
            );
            let aborter = signal.clone();
            let (s, sig) = (store.clone(), signal.clone());
            exec.spawn(Box::pin(async move {
                for _ in 0..3 {
                    yield_now().await;
                }
                aborter.abort();
            }));
            let out = exec.run_until(async move { list_descendants(&*s, ROOT, &sig).await });
            let err = out.unwrap_or_else(|| panic!("{label}/{stalled}: still stalled after abort")).unwrap_err();
            assert_eq!(err.code, ErrorCode::Cancelled, "{label}/{stalled}: {err}");
        }
    }
}

/// The store receives the caller's signal with each read ("cancellation
/// forwarded to ... each catalog read").
#[test]
fn the_signal_is_forwarded_to_each_read() {
    use std::cell::RefCell;
    use subagent_tree::exec::LocalBoxFuture;
    use subagent_tree::store::ReadResult;
    use subagent_tree::ReadQuery;
    struct Watch {
        inner: subagent_tree::MemoryStore,
        expected: Signal,
        seen: RefCell<Vec<bool>>,
    }
    impl Store for Watch {
        fn append<'a>(&'a self, s: &'a str, e: Vec<subagent_tree::SessionEvent>) -> LocalBoxFuture<'a, Result<()>> {
            self.inner.append(s, e)
        }
        fn read<'a>(&'a self, s: &'a str, q: &'a ReadQuery) -> LocalBoxFuture<'a, ReadResult> {
            self.seen.borrow_mut().push(q.signal.same(&self.expected));
            self.inner.read(s, q)
        }
        fn read_many<'a>(
            &'a self,
            s: &'a [String],
            q: &'a ReadQuery,
        ) -> Option<LocalBoxFuture<'a, Result<Vec<ReadResult>>>> {
            let batch = self.inner.read_many(s, q)?;
            self.seen.borrow_mut().push(q.signal.same(&self.expected));
            Some(batch)
        }
    }
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha")).add("a", v3("b", "continuable", "bravo"));
    for (label, batch) in STRATEGIES {
        let signal = Signal::new();
        let store = Rc::new(Watch { inner: t.store(batch), expected: signal.clone(), seen: RefCell::default() });
        let s = store.clone();
        block_on(async move { list_descendants(&*s, ROOT, &signal).await }).unwrap();
        let seen = store.seen.borrow();
        assert_eq!(seen.len(), 3, "{label}");
        assert!(seen.iter().all(|&same| same), "{label}: {seen:?}");
    }
}

// ---------------------------------------------------------------------------
// resolveName

fn named_tree() -> Tree {
    let mut t = Tree::new();
    t.add(ROOT, v3("id-rev", "continuable", "reviewer"))
        .add(ROOT, v3("id-wri", "continuable", "writer"))
        .add(ROOT, v3("id-ext", "external", "ext"))
        .add(ROOT, v0("id-old", "continuable"))
        .add(ROOT, v3("id-gone", "continuable", "gone"))
        .add("id-rev", v3("id-chk", "continuable", "checker"))
        .add("id-rev", v3("id-lnt", "one-shot", "linter"))
        .add("id-chk", v3("id-deep", "one-shot", "deep"))
        .add("id-wri", v3("id-w1", "continuable", "checker"))
        .add("id-old", v3("id-under-old", "continuable", "under"))
        // A session carrying the external's id: must never be read.
        .add("id-ext", v3("id-behind", "continuable", "inner"))
        .drop_session("id-gone");
    t
}

/// "`lead` selects the root" without reading anything.
#[test]
fn resolve_lead_is_the_root() {
    for (label, batch) in STRATEGIES {
        let store = Rc::new(TestStore::new(named_tree().store(batch)));
        assert_eq!(resolve(&store, "lead").unwrap(), ROOT, "{label}");
        assert_eq!(store.round_trips(), 0, "{label}");
    }
}

/// "any other text is returned as a Session id", unchanged and without reads;
/// a UUID never parses as a name, even one starting with a letter.
#[test]
fn resolve_returns_other_text_unchanged_as_a_session_id() {
    let store = Rc::new(TestStore::new(named_tree().store(true)));
    for text in [
        "0b7e2a4c-1d2f-4e5a-9b8c-7d6e5f4a3b2c",
        "abcdef01-2345-4789-abcd-ef0123456789",
        "Session_1",
        "lead/reviewer",
        "Reviewer",
        "reviewer/",
        "/reviewer",
        "reviewer//checker",
        "",
        "a very long name that is not a name at all",
    ] {
        assert_eq!(resolve(&store, text).unwrap(), text);
    }
    assert_eq!(store.round_trips(), 0);
}

/// "a slash-separated path is looked up through the catalogs along it" and
/// "resolveName() reads only the catalogs along the path".
#[test]
fn resolve_a_path_reads_only_the_catalogs_along_it() {
    for (label, batch) in STRATEGIES {
        let store = Rc::new(TestStore::new(named_tree().store(batch)));
        assert_eq!(resolve(&store, "reviewer/checker/deep").unwrap(), "id-deep", "{label}");
        assert_eq!(
            *store.calls.borrow(),
            [Call::Read(ROOT.into()), Call::Read("id-rev".into()), Call::Read("id-chk".into())],
            "{label}"
        );
        store.calls.borrow_mut().clear();
        // Same segment name under another parent resolves to that parent's child.
        assert_eq!(resolve(&store, "writer/checker").unwrap(), "id-w1", "{label}");
        assert_eq!(*store.calls.borrow(), [Call::Read(ROOT.into()), Call::Read("id-wri".into())], "{label}");
        store.calls.borrow_mut().clear();
        assert_eq!(resolve(&store, "reviewer").unwrap(), "id-rev", "{label}");
        assert_eq!(*store.calls.borrow(), [Call::Read(ROOT.into())], "{label}");
        store.calls.borrow_mut().clear();
        // The last segment may be an external entry (it is not read).
        assert_eq!(resolve(&store, "ext").unwrap(), "id-ext", "{label}");
        assert_eq!(*store.calls.borrow(), [Call::Read(ROOT.into())], "{label}");
    }
}

/// A segment no catalog along the path names is UNKNOWN_AGENT, with the text in
/// the message; a member below an unnamed creator has no path to resolve.
#[test]
fn resolve_a_missing_segment_is_unknown_agent() {
    let store = Rc::new(TestStore::new(named_tree().store(true)));
    for text in ["nobody", "reviewer/nobody", "reviewer/checker/deep/deeper", "checker", "under", "gone/x"] {
        let err = resolve(&store, text).expect_err(text);
        assert_eq!(err.code, ErrorCode::UnknownAgent, "{text}: {err}");
        assert!(err.message.contains(&format!("{text:?}")), "{text}: {}", err.message);
    }
}

/// External entries cannot open a child Session: a path through one is
/// UNKNOWN_AGENT and the session carrying its id is never read.
#[test]
fn resolve_a_path_through_an_external_entry_is_unknown_agent() {
    for (label, batch) in STRATEGIES {
        let store = Rc::new(TestStore::new(named_tree().store(batch)));
        let err = resolve(&store, "ext/inner").unwrap_err();
        assert_eq!(err.code, ErrorCode::UnknownAgent, "{label}: {err}");
        assert_eq!(store.reads_per_session().get("id-ext"), None, "{label}");
    }
}

/// "@throws when ... a catalog along the path cannot be read": a failed read
/// rejects with the store's error, a corrupt catalog with CORRUPT_CATALOG.
#[test]
fn resolve_rejects_when_a_catalog_along_the_path_cannot_be_read() {
    for failing in [ROOT, "id-rev", "id-chk"] {
        let store = Rc::new(TestStore::new(named_tree().store(true)).failing(&[failing]));
        let err = resolve(&store, "reviewer/checker/deep").unwrap_err();
        assert_eq!(err.code, ErrorCode::PersistenceUnavailable, "{failing}: {err}");
    }
    // A failure off the path does not matter.
    let store = Rc::new(TestStore::new(named_tree().store(true)).failing(&["id-wri", "id-lnt"]));
    assert_eq!(resolve(&store, "reviewer/checker/deep").unwrap(), "id-deep");

    // A bad entry along the path names nobody; the entries around it still resolve.
    let mut t = named_tree();
    t.push("id-rev", subagent_tree::event::CATALOG, serde_json::json!({"version":0,"childId":"z","name":"bad"}));
    t.push("id-rev", subagent_tree::event::CATALOG, serde_json::json!({"$damaged":"ill-formed", "name":"worse"}));
    let store = Rc::new(t.store(false));
    assert_eq!(resolve(&store, "reviewer/checker").unwrap(), "id-chk");
    assert_eq!(resolve(&store, "reviewer/bad").unwrap_err().code, ErrorCode::UnknownAgent);
    assert_eq!(resolve(&store, "reviewer/worse").unwrap_err().code, ErrorCode::UnknownAgent);
    assert_eq!(resolve(&store, "writer/checker").unwrap(), "id-w1");
}

/// Resolution follows only a session's own catalog events, not a fork's inherited prefix.
#[test]
fn resolve_ignores_fork_inherited_entries() {
    let mut t = Tree::new();
    t.add(ROOT, v3("old", "continuable", "old"));
    t.fork(ROOT, "fork").add("fork", v3("own", "continuable", "own"));
    t.add(ROOT, v3("fork", "continuable", "forked"));
    let store = Rc::new(t.store(true));
    assert_eq!(resolve(&store, "forked/own").unwrap(), "own");
    assert_eq!(resolve(&store, "forked/old").unwrap_err().code, ErrorCode::UnknownAgent);
}

/// "cancellation forwarded to each catalog read": an aborted signal rejects,
/// and a stalled read along the path gives way to an abort from another task.
#[test]
fn resolve_rejects_on_cancellation() {
    let store = Rc::new(TestStore::new(named_tree().store(true)));
    let signal = Signal::new();
    signal.abort();
    let s = store.clone();
    let err = block_on(async move { resolve_name(&*s, ROOT, "reviewer", &signal).await }).unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    // `lead` and Session ids need no read, so they do not observe the signal.

    let store = Rc::new(TestStore::new(named_tree().store(true)).stalling(&["id-rev"]));
    let exec = LocalExecutor::new();
    let signal = Signal::new();
    let aborter = signal.clone();
    exec.spawn(Box::pin(async move {
        yield_now().await;
        yield_now().await;
        aborter.abort();
    }));
    let s = store.clone();
    let out = exec.run_until(async move { resolve_name(&*s, ROOT, "reviewer/checker", &signal).await });
    assert_eq!(out.expect("not stalled").unwrap_err().code, ErrorCode::Cancelled);
    assert_eq!(store.reads_per_session().get("id-rev"), Some(&1));
}

/// "Resolution grants no authority": it only returns ids; the store is not
/// written and nothing else changes.
#[test]
fn resolve_only_returns_ids_and_writes_nothing() {
    let t = named_tree();
    let store = Rc::new(t.store(true));
    let before: Vec<_> = t.session_ids().iter().map(|id| store.len(id)).collect();
    resolve(&store, "reviewer/checker").unwrap();
    resolve(&store, "nobody").unwrap_err();
    let after: Vec<_> = t.session_ids().iter().map(|id| store.len(id)).collect();
    assert_eq!(before, after);
    assert_eq!(store.stats().appends, 0);
    assert_eq!(store.sessions(), t.session_ids());
}

// ---------------------------------------------------------------------------
// Linear cost in depth

/// A 20,000-deep chain of 32-character names lists under both strategies:
/// each row's full name is its parent's plus one link (shared, never rebuilt
/// from the root), so the rows cost memory linear in the tree.
#[test]
fn a_20000_deep_chain_of_long_names_lists_with_shared_full_names() {
    const DEPTH: usize = 20_000;
    let name = |i: usize| format!("n{i:031}");
    let mut t = Tree::new();
    let mut parent = ROOT.to_owned();
    for i in 0..DEPTH {
        let id = format!("c{i}");
        t.add(&parent, v3(&id, "continuable", &name(i)));
        parent = id;
    }
    for (label, batch) in STRATEGIES {
        let store = Rc::new(t.store(batch));
        let rows = list(&store, ROOT).unwrap();
        assert_eq!(rows.len(), DEPTH, "{label}");
        let mut prev: Option<&subagent_tree::listing::FullName> = None;
        for (i, row) in rows.iter().enumerate() {
            let Row::Child(c) = row else { panic!("{label}: row {i} is {row:?}") };
            assert_eq!(c.depth as usize, i + 1);
            let path = c.path.as_ref().expect("a named chain has paths");
            assert_eq!(path.name().as_str(), name(i));
            assert_eq!(path.segments() as usize, i + 1);
            assert_eq!(path.len(), (i + 1) * 33 - 1);
            // The parent's link itself, not a copy.
            match (prev, path.parent()) {
                (None, None) => {}
                (Some(p), Some(q)) => assert!(p.same(q), "{label}: row {i} does not share its parent's full name"),
                other => panic!("{label}: row {i}: {other:?}"),
            }
            assert_eq!(c.has_children, i + 1 < DEPTH);
            prev = Some(path);
        }
        let last = rows.last().and_then(|r| match r {
            Row::Child(c) => c.path_string(),
            Row::Diagnostic(_) => None,
        });
        let last = last.unwrap();
        assert_eq!(last.len(), DEPTH * 33 - 1);
        assert!(last.starts_with(&format!("{}/{}/", name(0), name(1))));
        assert!(last.ends_with(&format!("/{}", name(DEPTH - 1))));
        // Dropping the rows unlinks the chain without recursing over its depth.
        drop(rows);
    }
}

/// Full names compare, print and drop without recursion, and equal text means equal names.
#[test]
fn full_names_compare_by_text_and_drop_iteratively() {
    use subagent_tree::listing::FullName;
    use subagent_tree::AgentName;
    let n = |s: &str| AgentName::parse(s).unwrap();
    let a = FullName::child(None, n("reviewer"));
    let ab = FullName::child(Some(&a), n("checker"));
    let other = FullName::child(Some(&FullName::child(None, n("reviewer"))), n("checker"));
    assert_eq!(ab.to_string(), "reviewer/checker");
    assert_eq!(format!("{ab:?}"), "\"reviewer/checker\"");
    assert_eq!(ab, other);
    assert!(!ab.same(&other));
    assert_eq!(ab, "reviewer/checker");
    for wrong in ["reviewer/checke", "reviewerchecker", "x/reviewer/checker", "checker", "reviewer/checker/"] {
        assert!(ab != wrong, "{wrong}");
    }
    assert_ne!(ab, FullName::child(Some(&a), n("checkers")));
    assert_ne!(ab, a);
    // A million links: built, compared, dropped, all without deep recursion.
    let mut deep = FullName::child(None, n("a"));
    let mut twin = FullName::child(None, n("a"));
    for _ in 0..1_000_000 {
        deep = FullName::child(Some(&deep), n("b"));
        twin = FullName::child(Some(&twin), n("b"));
    }
    assert_eq!(deep, twin);
    assert_eq!(deep.len(), 1 + 2 * 1_000_000);
    drop(deep);
    drop(twin);
}

// ---------------------------------------------------------------------------
// One path's rows without the rest of the tree (a cold resume's walk up)

/// `listing::chain` along the catalogs on one path gives the rows a listing
/// gives for that path, for every listed member of a tree that names no
/// Session id twice (named, unnamed, unknown-mode and one-shot members on the
/// way); `None` past an external entry or a catalog that does not hold the member.
#[test]
fn a_chain_along_one_path_gives_the_listings_rows_for_it() {
    let mut t = Tree::new();
    t.add(ROOT, v3("a", "continuable", "alpha"))
        .add(ROOT, v0("plain", "continuable"))
        .add(ROOT, v1_unknown("u"))
        .add(ROOT, v3("e", "external", "ext"))
        .add("a", v3("a1", "one-shot", "one"))
        .add("a", v3("a2", "continuable", "two"))
        .add("a2", v3("a2x", "continuable", "deep"))
        .add("plain", v3("p1", "continuable", "below-unnamed"))
        .add("u", v3("u1", "continuable", "under"))
        .add("u1", v3("u2", "continuable", "further"));
    let rows = list_both(&t, ROOT);
    assert_eq!(rows.len(), 10);
    let catalog_of = |id: &str| catalog::project_log(t.log(id)).unwrap();
    let unset = |row: &Row| match row {
        Row::Child(c) => Row::Child(subagent_tree::ChildRow { has_children: false, ..c.clone() }),
        d => d.clone(),
    };
    for row in &rows {
        // The path from the root down to `row`, as the listing's rows say.
        let mut way = vec![row.clone()];
        while way[0].parent_id() != ROOT {
            let parent = rows.iter().find(|r| r.id() == way[0].parent_id()).unwrap();
            way.insert(0, parent.clone());
        }
        let ids: Vec<String> = way.iter().map(|r| r.id().to_owned()).collect();
        let catalogs: Vec<_> = way.iter().map(|r| catalog_of(r.parent_id())).collect();
        let chain = subagent_tree::listing::chain(ROOT, None, &ids, &catalogs)
            .unwrap_or_else(|| panic!("no chain to {}", row.id()));
        let (got, want): (Vec<Row>, Vec<Row>) = (chain.iter().map(unset).collect(), way.iter().map(unset).collect());
        assert_eq!(render(&got), render(&want), "the way to {}", row.id());
        assert_eq!(got, want, "the way to {}", row.id());
        // From the first member's row down: the same rows below it.
        if let (Row::Child(top), true) = (&way[0], way.len() > 1) {
            let below = subagent_tree::listing::chain(ROOT, Some(top), &ids[1..], &catalogs[1..]).unwrap();
            assert_eq!(below.iter().map(unset).collect::<Vec<_>>(), want[1..], "below {}", top.id);
        }
    }
    let chain = |ids: &[&str], parents: &[&str]| {
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        let catalogs: Vec<_> = parents.iter().map(|p| catalog_of(p)).collect();
        subagent_tree::listing::chain(ROOT, None, &ids, &catalogs)
    };
    assert!(chain(&["a", "a2"], &[ROOT, "a"]).is_some());
    assert!(chain(&["a", "p1"], &[ROOT, "a"]).is_none(), "a's catalog does not hold p1");
    assert!(chain(&["e", "x"], &[ROOT, "e"]).is_none(), "a listing never descends past an external entry");
    assert!(chain(&["a", "a"], &[ROOT, ROOT]).is_none(), "an id repeated on the way");
    assert!(chain(&["a"], &[ROOT, "a"]).is_none(), "one catalog per member");
}

// ---------------------------------------------------------------------------
// The machines without I/O: a host that does its own reads gets the same rows

/// Answers each level of `lister` from `store`'s logs, in an order of the
/// host's choosing (`reverse`: each level read last-first, answers put back
/// in `wants` order), and returns what it was asked level by level.
fn drive_by_hand(
    lister: &mut subagent_tree::listing::Lister,
    store: &subagent_tree::MemoryStore,
    reverse: bool,
) -> Vec<Vec<String>> {
    let mut asked = Vec::new();
    while !lister.wants().is_empty() {
        let ids = lister.wants().to_vec();
        let mut order: Vec<usize> = (0..ids.len()).collect();
        if reverse {
            order.reverse();
        }
        let mut reads: Vec<Option<subagent_tree::store::ReadResult>> = ids.iter().map(|_| None).collect();
        for i in order {
            reads[i] = Some(Ok(store.read_now(&ids[i], lister.query())));
        }
        lister.answer(Ok(reads.into_iter().map(Option::unwrap).collect())).unwrap();
        asked.push(ids);
    }
    asked
}

#[test]
fn a_lister_driven_by_hand_asks_level_by_level_and_gives_the_listing_rows() {
    let t = tangled_tree();
    let store = t.store(true);
    let mut lister = subagent_tree::listing::Lister::new(ROOT);
    assert!(lister.at_root());
    let asked = drive_by_hand(&mut lister, &store, true);
    assert_eq!(asked[0], vec![ROOT.to_owned()], "the root alone first");
    assert_eq!(asked[1], vec!["a".to_owned(), "b".to_owned()], "then its non-external children, each once");
    let every: Vec<&String> = asked.iter().flatten().collect();
    assert_eq!(every.len(), every.iter().collect::<std::collections::HashSet<_>>().len(), "no session asked twice");
    assert!(!every.iter().any(|id| *id == "e"), "external members are never read");
    assert_eq!(render(&lister.rows()), render(&list_both(&t, ROOT)));
}

#[test]
fn a_lister_takes_a_failed_or_miscounted_batch_as_every_branch_unavailable() {
    let t = tangled_tree();
    let store = t.store(true);
    for bad in [Err(subagent_tree::SubagentError::cancelled()), Ok(Vec::new())] {
        let mut lister = subagent_tree::listing::Lister::new(ROOT);
        lister.answer(Ok(vec![Ok(store.read_now(ROOT, lister.query()))])).unwrap();
        lister.answer(bad).unwrap();
        assert!(lister.wants().is_empty(), "nothing below an unreadable level is asked");
        assert_rows(
            &lister.rows(),
            &["a <root !unavailable", "b <root !unavailable", "e <root external name=ext path=ext"],
        );
    }
}

#[test]
fn a_lister_fails_with_its_root_and_lists_nothing_under_a_missing_one() {
    let failed = subagent_tree::SubagentError::new(ErrorCode::PersistenceUnavailable, "down");
    let mut lister = subagent_tree::listing::Lister::new(ROOT);
    assert_eq!(lister.answer(Ok(vec![Err(failed)])).unwrap_err().code, ErrorCode::PersistenceUnavailable);
    let mut lister = subagent_tree::listing::Lister::new(ROOT);
    assert_eq!(
        lister.answer(Ok(vec![])).unwrap_err().code,
        ErrorCode::PersistenceUnavailable,
        "one answer per root read"
    );
    let mut lister = subagent_tree::listing::Lister::new(ROOT);
    lister.answer(Ok(vec![Ok(None)])).unwrap();
    assert!(lister.wants().is_empty() && lister.rows().is_empty());
}

#[test]
fn a_resolver_reads_only_the_catalogs_along_the_path() {
    let t = tangled_tree();
    let store = t.store(true);
    let mut resolver = subagent_tree::listing::Resolver::new(ROOT, "alpha/one/deep");
    let mut asked = Vec::new();
    while let [session] = resolver.wants() {
        let session = session.clone();
        let read = Ok(store.read_now(&session, resolver.query()));
        resolver.answer(Ok(vec![read])).unwrap();
        asked.push(session);
    }
    assert_eq!(asked, ["root", "a", "a1"]);
    assert_eq!(resolver.resolved(), Some("deep"));
    for (text, id) in [("lead", ROOT), ("0b7e3f5a-1c2d", "0b7e3f5a-1c2d")] {
        let resolver = subagent_tree::listing::Resolver::new(ROOT, text);
        assert!(resolver.wants().is_empty(), "{text} reads nothing");
        assert_eq!(resolver.resolved(), Some(id));
    }
    // A segment that names nobody goes on as a listing of the tree, level by level.
    let mut resolver = subagent_tree::listing::Resolver::new(ROOT, "alpha/nobody");
    resolver.answer(Ok(vec![Ok(store.read_now(ROOT, resolver.query()))])).unwrap();
    resolver.answer(Ok(vec![Ok(store.read_now("a", resolver.query()))])).unwrap();
    assert!(!resolver.batch(), "the listing's root is one read");
    assert_eq!(resolver.wants(), [ROOT]);
    let e = loop {
        let reads = resolver.wants().iter().map(|id| Ok(store.read_now(id, resolver.query()))).collect();
        match resolver.answer(Ok(reads)) {
            Ok(()) => assert!(resolver.batch() && !resolver.wants().is_empty()),
            Err(e) => break e,
        }
    };
    assert_eq!(e.code, ErrorCode::UnknownAgent);
    assert_eq!(resolver.resolved(), None);
}
