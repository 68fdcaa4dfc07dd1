//! The wasm bridge from inside wasm: coded errors, JS stores of every shape
//! (sync, async, rejecting, throwing, missing methods, hostile), abort,
//! concurrency on one MemoryStore, and the JS shapes. Runs in Node and, with
//! `WASM_BINDGEN_USE_BROWSER=1`, in headless Chromium (scripts/test-wasm.sh).
#![cfg(target_arch = "wasm32")]

use js_sys::{Array, Function, Object, Promise, Reflect};
use subagent_tree::wasm::api;
use subagent_tree::wasm::store::WasmMemoryStore;
use subagent_tree::ErrorCode;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

#[wasm_bindgen(inline_js = r#"
export function cat(seq, id, extra) {
  return { seq, type: 'subagent/catalog', payload: { version: 3, childId: id, childCreatedAt: seq, mode: 'one-shot', name: id, ...(extra || {}) } };
}
export function v0(seq, id) {
  return { seq, type: 'subagent/catalog', payload: { version: 0, childId: id, childCreatedAt: seq, mode: 'one-shot' } };
}
export function ev(seq, type, payload) { return { seq, type, payload }; }
// A store over { id: events } whose methods answer in the given style.
export function store(logs, style, withMany) {
  const calls = { read: [], readMany: [], options: [] };
  const answer = (value) => {
    switch (style) {
      case 'sync': return value;
      case 'async': return new Promise((r) => setTimeout(() => r(value), 1));
      case 'thenable': return { then(ok) { ok(value); } };
      default: throw new Error('unknown style ' + style);
    }
  };
  const s = {
    calls,
    append() { return undefined; },
    read(id, options) { calls.read.push(id); calls.options.push(options); return answer(logs[id] ?? null); },
  };
  if (withMany) s.readMany = (ids, options) => { calls.readMany.push(ids); calls.options.push(options); return answer(ids.map((id) => logs[id] ?? null)); };
  return s;
}
export function failing(kind, thrown, failId) {
  const calls = { read: 0 };
  return {
    calls,
    read(id) {
      calls.read++;
      if (failId !== undefined && id !== failId) return [];
      if (kind === 'throw') throw thrown;
      if (kind === 'reject') return Promise.reject(thrown);
      if (kind === 'never') return new Promise(() => {});
      if (kind === 'value') return thrown;
      throw new Error('bad kind');
    },
  };
}
export function hostileProxy() {
  return new Proxy({}, { get() { throw new Error('trap'); }, ownKeys() { throw new Error('trap'); } });
}
export function throwingGetter(key) {
  const o = {};
  Object.defineProperty(o, key, { get() { throw new Error('getter'); }, enumerable: true });
  return o;
}
export function cyclic() { const o = { a: 1 }; o.self = o; return o; }
export function deep(n) { let o = {}; for (let i = 0; i < n; i++) o = { o }; return o; }
export function controller() { return new AbortController(); }
export function abortLater(c, reason, ms) { setTimeout(() => c.abort(reason), ms); }
export function has(o, k) { return Object.prototype.hasOwnProperty.call(o, k); }
export function isError(e) { return e instanceof Error; }
export function json(v) { return JSON.stringify(v); }
export function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }
export function failOn(inner, failId, how) {
  return {
    calls: inner.calls,
    read(id, o) {
      if (id !== failId) return inner.read(id, o);
      if (how === 'throw') throw new TypeError('cannot read ' + id);
      if (how === 'reject') return Promise.reject(new Error('gone'));
      if (how === 'garbled') return [{ seq: 'zero', type: 'subagent/catalog', payload: {} }];
      return [{ seq: 0, type: 'subagent/catalog', payload: { version: 7 } }];
    },
  };
}
export function wrapMemory(ms) {
  const calls = { read: 0, readMany: 0 };
  return {
    calls,
    append: (id, e) => ms.append(id, e),
    read: (id, o) => { calls.read++; return ms.read(id, o); },
    readMany: (ids, o) => { calls.readMany++; return ms.readMany(ids, o); },
  };
}
"#)]
extern "C" {
    fn cat(seq: u32, id: &str, extra: JsValue) -> JsValue;
    fn v0(seq: u32, id: &str) -> JsValue;
    fn ev(seq: u32, kind: &str, payload: JsValue) -> JsValue;
    fn store(logs: &JsValue, style: &str, with_many: bool) -> JsValue;
    fn failing(kind: &str, thrown: JsValue, fail_id: JsValue) -> JsValue;
    #[wasm_bindgen(js_name = hostileProxy)]
    fn hostile_proxy() -> JsValue;
    #[wasm_bindgen(js_name = throwingGetter)]
    fn throwing_getter(key: &str) -> JsValue;
    fn cyclic() -> JsValue;
    fn deep(n: u32) -> JsValue;
    fn controller() -> JsValue;
    #[wasm_bindgen(js_name = abortLater)]
    fn abort_later(c: &JsValue, reason: &JsValue, ms: u32);
    fn has(o: &JsValue, k: &str) -> bool;
    #[wasm_bindgen(js_name = isError)]
    fn is_error(e: &JsValue) -> bool;
    fn json(v: &JsValue) -> String;
    fn sleep(ms: u32) -> Promise;
    #[wasm_bindgen(js_name = failOn)]
    fn fail_on(inner: JsValue, fail_id: &str, how: &str) -> JsValue;
    #[wasm_bindgen(js_name = wrapMemory)]
    fn wrap_memory(ms: &JsValue) -> JsValue;
}

/// An options argument of any of the bridge's option types.
fn o<T: JsCast>(v: JsValue) -> Option<T> {
    Some(v.unchecked_into())
}

fn get(o: &JsValue, k: &str) -> JsValue {
    Reflect::get(o, &k.into()).unwrap()
}

fn arr(items: Vec<JsValue>) -> JsValue {
    items.into_iter().collect::<Array>().into()
}

fn logs(entries: Vec<(&str, Vec<JsValue>)>) -> JsValue {
    let o = Object::new();
    for (id, events) in entries {
        Reflect::set(&o, &id.into(), &arr(events)).unwrap();
    }
    o.into()
}

fn opts(pairs: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in pairs {
        Reflect::set(&o, &(*k).into(), v).unwrap();
    }
    o.into()
}

fn code(err: &JsValue) -> String {
    get(err, "code").as_string().unwrap_or_default()
}

/// Checks an error is a real `Error` named SubagentError with `code`.
fn assert_coded(err: &JsValue, expected: ErrorCode) {
    assert!(is_error(err), "not an Error: {}", json(err));
    assert_eq!(get(err, "name").as_string().as_deref(), Some("SubagentError"));
    assert_eq!(code(err), expected.as_str(), "message: {:?}", get(err, "message").as_string());
    let message = get(err, "message").as_string().unwrap();
    assert!(!message.is_empty() && message.len() < 400, "{message}");
}

async fn settle(p: Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(p).await
}

async fn list(store: &JsValue, root: &str, options: JsValue) -> Result<JsValue, JsValue> {
    settle(api::list_descendants(store.clone(), root.into(), o(options))).await
}

fn ids(rows: &JsValue) -> Vec<String> {
    Array::from(rows)
        .iter()
        .map(|r| {
            let id = get(&r, "id").as_string().unwrap();
            if get(&r, "kind").as_string().as_deref() == Some("diagnostic") {
                format!("{id}!{}", get(&r, "reason").as_string().unwrap())
            } else {
                id
            }
        })
        .collect()
}

/// root -> a(-> a1, a2), b(external), c(-> missing m)
fn tree() -> JsValue {
    logs(vec![
        (
            "root",
            vec![
                cat(0, "a", JsValue::UNDEFINED),
                cat(1, "b", opts(&[("mode", "external".into())])),
                cat(2, "c", JsValue::UNDEFINED),
            ],
        ),
        ("a", vec![cat(0, "a1", JsValue::UNDEFINED), cat(1, "a2", JsValue::UNDEFINED)]),
        ("a1", vec![]),
        ("a2", vec![]),
        ("c", vec![cat(0, "m", JsValue::UNDEFINED)]),
    ])
}

#[wasm_bindgen_test]
fn names_and_their_errors() {
    assert!(api::is_valid_name("reviewer".into()));
    assert!(!api::is_valid_name("lead".into()));
    assert!(!api::is_valid_name(JsValue::from_f64(3.0)));
    assert!(!api::is_valid_name("a".repeat(100_000).into()));
    assert_eq!(api::validate_name("checker".into()).unwrap().as_string().as_deref(), Some("checker"));
    assert_coded(&api::validate_name("Reviewer".into()).unwrap_err(), ErrorCode::InvalidName);
    assert_coded(&api::validate_name("lead".into()).unwrap_err(), ErrorCode::InvalidName);
    let huge = api::validate_name("X".repeat(1_000_000).into()).unwrap_err();
    assert_coded(&huge, ErrorCode::InvalidName);
    assert_coded(&api::validate_name(JsValue::NULL).unwrap_err(), ErrorCode::InvalidArgument);
    let taken = arr(vec!["agent-1".into(), "agent-3".into()]);
    assert_eq!(api::default_name(taken).unwrap(), "agent-2");
    assert_coded(&api::default_name("agent-1".into()).unwrap_err(), ErrorCode::InvalidArgument);
    assert_coded(&api::default_name(arr(vec![JsValue::from_f64(1.0)])).unwrap_err(), ErrorCode::InvalidArgument);
    assert_coded(&api::default_name(hostile_proxy()).unwrap_err(), ErrorCode::InvalidArgument);
}

#[wasm_bindgen_test]
fn agent_refs() {
    assert_eq!(json(&api::parse_agent_ref("lead".into()).unwrap()), r#"{"kind":"lead"}"#);
    assert_eq!(json(&api::parse_agent_ref("a/b".into()).unwrap()), r#"{"kind":"path","segments":["a","b"]}"#);
    let uuid = "0b0e7c1e-8c0a-4f7e-9d8b-2f4a6c1d3e5f";
    assert_eq!(json(&api::parse_agent_ref(uuid.into()).unwrap()), format!(r#"{{"kind":"session","id":"{uuid}"}}"#));
    assert_coded(&api::parse_agent_ref(JsValue::UNDEFINED).unwrap_err(), ErrorCode::InvalidArgument);
}

#[wasm_bindgen_test]
fn catalog_payloads_and_projection() {
    let entry = api::decode_catalog_payload(get(&cat(4, "c1", opts(&[("label", "L".into())])), "payload")).unwrap();
    assert_eq!(json(&entry), r#"{"id":"c1","createdAt":4,"mode":"one-shot","label":"L","name":"c1"}"#);
    let v0 = api::decode_catalog_payload(get(&v0(1, "old"), "payload")).unwrap();
    assert!(!has(&v0, "label") && !has(&v0, "name"), "absent, not undefined: {}", json(&v0));
    for bad in [JsValue::NULL, JsValue::UNDEFINED, "x".into(), cyclic(), deep(10_000), throwing_getter("version")] {
        assert_coded(&api::decode_catalog_payload(bad).unwrap_err(), ErrorCode::CorruptCatalog);
    }
    let with_fn = opts(&[("version", JsValue::from_f64(0.0)), ("childId", Function::new_no_args("").into())]);
    assert_coded(&api::decode_catalog_payload(with_fn).unwrap_err(), ErrorCode::CorruptCatalog);

    let events = arr(vec![
        cat(0, "inherited", JsValue::UNDEFINED),
        ev(1, "message/user", "hi".into()),
        cat(2, "b", JsValue::UNDEFINED),
        cat(3, "b", JsValue::UNDEFINED),
    ]);
    let all = api::project_catalog(events.clone(), None).unwrap();
    assert_eq!(ids(&all), ["inherited", "b", "b"]);
    let own =
        api::project_catalog(events.clone(), o(opts(&[("inheritedEventCount", JsValue::from_f64(1.0))]))).unwrap();
    assert_eq!(ids(&own), ["b", "b"]);
    for bad in [JsValue::from_f64(-1.0), JsValue::from_f64(1.5), "1".into()] {
        let err = api::project_catalog(events.clone(), o(opts(&[("inheritedEventCount", bad)]))).unwrap_err();
        assert_coded(&err, ErrorCode::InvalidArgument);
    }
    assert_coded(&api::project_catalog("x".into(), None).unwrap_err(), ErrorCode::InvalidArgument);
    let bad_event = arr(vec![ev(0, "x", JsValue::NULL), opts(&[("seq", JsValue::from_f64(-1.0))])]);
    assert_coded(&api::project_catalog(bad_event, None).unwrap_err(), ErrorCode::InvalidArgument);
    let corrupt = arr(vec![ev(0, "subagent/catalog", opts(&[("version", JsValue::from_f64(9.0))]))]);
    assert_coded(&api::project_catalog(corrupt, None).unwrap_err(), ErrorCode::CorruptCatalog);
}

#[wasm_bindgen_test]
async fn listing_through_every_store_style_gives_the_same_rows() {
    let expected = ["a", "a1", "a2", "b", "c", "m!unavailable"];
    for style in ["sync", "async", "thenable"] {
        for with_many in [false, true] {
            let s = store(&tree(), style, with_many);
            let rows = list(&s, "root", JsValue::UNDEFINED).await.unwrap();
            assert_eq!(ids(&rows), expected, "{style} readMany={with_many}");
            let calls = get(&s, "calls");
            let reads = Array::from(&get(&calls, "read")).length();
            let batches = Array::from(&get(&calls, "readMany"));
            if with_many {
                // root alone, then one batch per level: [a, c], [a1, a2, m]
                assert_eq!(reads, 1);
                assert_eq!(json(&batches), r#"[["a","c"],["a1","a2","m"]]"#);
            } else {
                assert_eq!(reads, 6, "each reachable non-external catalog once");
                assert_eq!(batches.length(), 0);
            }
        }
    }
    let rows = list(&store(&tree(), "sync", false), "root", JsValue::UNDEFINED).await.unwrap();
    let a = Array::from(&rows).get(0);
    assert_eq!(
        json(&a),
        r#"{"kind":"child","id":"a","parentId":"root","depth":1,"mode":"one-shot","name":"a","path":"a","hasChildren":true}"#
    );
    let m = Array::from(&rows).get(5);
    assert_eq!(json(&m), r#"{"kind":"diagnostic","id":"m","parentId":"c","depth":2,"reason":"unavailable"}"#);
}

#[wasm_bindgen_test]
async fn stores_receive_types_from_seq_and_the_callers_signal() {
    let s = store(&tree(), "sync", false);
    let c = controller();
    let signal = get(&c, "signal");
    list(&s, "root", opts(&[("signal", signal.clone())])).await.unwrap();
    let first = Array::from(&get(&get(&s, "calls"), "options")).get(0);
    assert_eq!(json(&get(&first, "types")), r#"["subagent/catalog","session/start"]"#);
    assert_eq!(get(&first, "fromSeq").as_f64(), Some(0.0));
    assert!(get(&first, "signal") == signal, "the caller's own AbortSignal");
    // Without a caller signal, stores still get a (never-aborted) AbortSignal.
    let s = store(&tree(), "sync", true);
    list(&s, "root", JsValue::UNDEFINED).await.unwrap();
    let batch = Array::from(&get(&get(&s, "calls"), "options")).get(1);
    assert!(!has(&batch, "fromSeq"));
    assert_eq!(get(&get(&batch, "signal"), "aborted").as_bool(), Some(false));
}

#[wasm_bindgen_test]
async fn store_failures_are_coded_with_the_original_cause() {
    for kind in ["throw", "reject"] {
        let thrown = js_sys::Error::new("disk on fire");
        let err = list(&failing(kind, thrown.clone().into(), JsValue::UNDEFINED), "root", JsValue::UNDEFINED)
            .await
            .unwrap_err();
        assert_coded(&err, ErrorCode::PersistenceUnavailable);
        assert!(get(&err, "cause") == JsValue::from(thrown), "{kind}: cause is the thrown value itself");
        let message = get(&err, "message").as_string().unwrap();
        assert!(message.contains("store.read") && message.contains("\"root\""), "{message}");
    }
    // A store that throws a SubagentError passes it through unchanged.
    let own = api::validate_name("Bad".into()).unwrap_err();
    let err = list(&failing("throw", own.clone(), JsValue::UNDEFINED), "root", JsValue::UNDEFINED).await.unwrap_err();
    assert!(err == own, "the very same error object");
    // A missing method, a non-array answer, a malformed event.
    let err = list(&Object::new().into(), "root", JsValue::UNDEFINED).await.unwrap_err();
    assert_coded(&err, ErrorCode::PersistenceUnavailable);
    let err = list(&failing("value", JsValue::from_f64(42.0), JsValue::UNDEFINED), "root", JsValue::UNDEFINED)
        .await
        .unwrap_err();
    assert_coded(&err, ErrorCode::PersistenceUnavailable);
    let bad = arr(vec![opts(&[("seq", "zero".into()), ("type", "subagent/catalog".into())])]);
    let err = list(&failing("value", bad, JsValue::UNDEFINED), "root", JsValue::UNDEFINED).await.unwrap_err();
    assert_coded(&err, ErrorCode::CorruptCatalog);
    // A child's failure only marks its branch; the rest of the tree lists.
    for how in ["throw", "reject", "garbled"] {
        let s = fail_on(store(&tree(), "sync", false), "a", how);
        let rows = list(&s, "root", JsValue::UNDEFINED).await.unwrap();
        let expected = if how == "garbled" { "a!corrupt" } else { "a!unavailable" };
        assert_eq!(ids(&rows), [expected, "b", "c", "m!unavailable"], "{how}");
    }
    // One entry that does not decode is one corrupt row (the empty id: its childId is missing).
    let rows = list(&fail_on(store(&tree(), "sync", false), "a", "value"), "root", JsValue::UNDEFINED).await.unwrap();
    assert_eq!(ids(&rows), ["a", "!corrupt", "b", "c", "m!unavailable"]);
}

#[wasm_bindgen_test]
async fn bad_arguments_reject_with_invalid_argument() {
    let good = store(&tree(), "sync", false);
    for (s, root, options) in [
        (JsValue::NULL, JsValue::from("root"), JsValue::UNDEFINED),
        (JsValue::from_f64(3.0), "root".into(), JsValue::UNDEFINED),
        (good.clone(), JsValue::from_f64(1.0), JsValue::UNDEFINED),
        (good.clone(), "".into(), JsValue::UNDEFINED),
        (good.clone(), "root".into(), "fast".into()),
        (good.clone(), "root".into(), opts(&[("signal", "yes".into())])),
        (good.clone(), "root".into(), throwing_getter("signal")),
        (good.clone(), "root".into(), hostile_proxy()),
    ] {
        let err = settle(api::list_descendants(s, root, o(options))).await.unwrap_err();
        assert_coded(&err, ErrorCode::InvalidArgument);
    }
    // A Proxy store whose every trap throws: readMany cannot even be looked up.
    let err = list(&hostile_proxy(), "root", JsValue::UNDEFINED).await.unwrap_err();
    assert_coded(&err, ErrorCode::PersistenceUnavailable);
    // The module keeps working after all of that.
    assert_eq!(ids(&list(&good, "root", JsValue::UNDEFINED).await.unwrap()).len(), 6);
}

#[wasm_bindgen_test]
async fn abort_rejects_with_cancelled_and_the_reason_as_cause() {
    // Already aborted: no store call at all.
    let c = controller();
    let reason: JsValue = js_sys::Error::new("stop now").into();
    get(&c, "abort").unchecked_into::<Function>().call1(&c, &reason).unwrap();
    let s = store(&tree(), "sync", false);
    let err = list(&s, "root", opts(&[("signal", get(&c, "signal"))])).await.unwrap_err();
    assert_coded(&err, ErrorCode::Cancelled);
    assert!(get(&err, "cause") == reason);
    assert_eq!(Array::from(&get(&get(&s, "calls"), "read")).length(), 0);

    // A store that never settles, aborted later.
    let c = controller();
    let reason: JsValue = "user left".into();
    abort_later(&c, &reason, 5);
    let never = failing("never", JsValue::UNDEFINED, JsValue::UNDEFINED);
    let err = list(&never, "root", opts(&[("signal", get(&c, "signal"))])).await.unwrap_err();
    assert_coded(&err, ErrorCode::Cancelled);
    assert!(get(&err, "cause") == reason);

    // resolveName too.
    let c = controller();
    abort_later(&c, &JsValue::UNDEFINED, 5);
    let p = api::resolve_name(never, "root".into(), "a/b".into(), o(opts(&[("signal", get(&c, "signal"))])));
    let err = settle(p).await.unwrap_err();
    assert_coded(&err, ErrorCode::Cancelled);
    assert!(is_error(&get(&err, "cause")), "the default reason is an AbortError");
}

#[wasm_bindgen_test]
async fn resolve_name_reads_only_the_path() {
    let s = store(&tree(), "sync", true);
    let id = settle(api::resolve_name(s.clone(), "root".into(), "a/a2".into(), None)).await.unwrap();
    assert_eq!(id.as_string().as_deref(), Some("a2"));
    assert_eq!(json(&get(&get(&s, "calls"), "read")), r#"["root","a"]"#);
    let lead = settle(api::resolve_name(s.clone(), "root".into(), "lead".into(), None)).await.unwrap();
    assert_eq!(lead.as_string().as_deref(), Some("root"));
    let other = settle(api::resolve_name(s.clone(), "root".into(), "X-1".into(), None)).await.unwrap();
    assert_eq!(other.as_string().as_deref(), Some("X-1"));
    let err = settle(api::resolve_name(s.clone(), "root".into(), "a/zz".into(), None)).await.unwrap_err();
    assert_coded(&err, ErrorCode::UnknownAgent);
    let err = settle(api::resolve_name(s, "root".into(), JsValue::from_f64(7.0), None)).await.unwrap_err();
    assert_coded(&err, ErrorCode::InvalidArgument);
}

#[wasm_bindgen_test]
async fn memory_store_contract_and_concurrency() {
    let ms = WasmMemoryStore::default();
    settle(ms.append("root".into(), arr(vec![cat(0, "a", JsValue::UNDEFINED), cat(1, "b", JsValue::UNDEFINED)])))
        .await
        .unwrap();
    settle(ms.append("a".into(), arr(vec![ev(0, "note", JsValue::NULL), cat(1, "a1", JsValue::UNDEFINED)])))
        .await
        .unwrap();
    let err = settle(ms.append("root".into(), arr(vec![ev(5, "x", JsValue::NULL)]))).await.unwrap_err();
    assert_coded(&err, ErrorCode::AppendConflict);
    let err = settle(ms.append("root".into(), "nope".into())).await.unwrap_err();
    assert_coded(&err, ErrorCode::InvalidArgument);
    assert!(settle(ms.read("nobody".into(), None)).await.unwrap().is_null());
    let filtered = settle(ms.read("a".into(), o(opts(&[("types", arr(vec!["note".into()]))])))).await.unwrap();
    assert_eq!(json(&filtered), r#"[{"seq":0,"type":"note","payload":null}]"#);
    let from = settle(ms.read("a".into(), o(opts(&[("fromSeq", JsValue::from_f64(1.0))])))).await.unwrap();
    assert_eq!(Array::from(&from).length(), 1);
    let many = settle(ms.read_many(arr(vec!["a".into(), "zz".into()]), None)).await.unwrap();
    assert_eq!(Array::from(&many).length(), 2);
    assert!(Array::from(&many).get(1).is_null());
    assert_eq!(settle(ms.flush("a".into())).await.unwrap().as_bool(), Some(false));

    // Two concurrent listings over one MemoryStore (through a counting
    // wrapper), and the exported class used directly as a store, while a write lands.
    let ms_js: JsValue = ms.into();
    let wrapped = wrap_memory(&ms_js);
    let p1 = api::list_descendants(wrapped.clone(), "root".into(), None);
    let p2 = api::list_descendants(wrapped.clone(), "root".into(), None);
    let p3 = api::list_descendants(ms_js.clone(), "root".into(), None);
    let append: Function = get(&ms_js, "append").unchecked_into();
    let write = append.call2(&ms_js, &"b".into(), &arr(vec![ev(0, "note", JsValue::NULL)])).unwrap();
    let all = settle(Promise::all(&arr(vec![p1.into(), p2.into(), p3.into(), write]))).await.unwrap();
    let all = Array::from(&all);
    // The write ran synchronously, before the listings' first reads.
    assert_eq!(ids(&all.get(0)), ["a", "a1!unavailable", "b"]);
    assert_eq!(json(&all.get(0)), json(&all.get(1)));
    let calls = get(&wrapped, "calls");
    assert_eq!(get(&calls, "readMany").as_f64(), Some(4.0), "two levels below the root, per listing");
    assert_eq!(get(&calls, "read").as_f64(), Some(2.0), "the root, per listing");
    let rows = list(&ms_js, "root", JsValue::UNDEFINED).await.unwrap();
    assert_eq!(json(&rows), json(&all.get(2)));
    let b = Array::from(&rows).get(2);
    assert_eq!(get(&b, "hasChildren").as_bool(), Some(false));
}

#[wasm_bindgen_test]
fn error_codes_match_the_core_and_the_types() {
    let list = api::error_code_list();
    assert_eq!(list.length() as usize, ErrorCode::ALL.len());
    for (i, code) in ErrorCode::ALL.iter().enumerate() {
        assert_eq!(list.get(i as u32).as_string().as_deref(), Some(code.as_str()));
        assert!(
            include_str!("../src/wasm/js/types/core.d.ts").contains(&format!("\"{}\"", code.as_str())),
            "{code} missing in TS"
        );
    }
}
