//! Descendant listing and name resolution over a [`Store`] (seeds 003 and 000).
//!
//! Listing reads catalogs level by level: every catalog of one depth in one
//! `read_many` round trip when the store offers it, else one `read` each with
//! up to [`MAX_CONCURRENT_READS`] of them in flight at once (so reads of one
//! level overlap, and a tree of depth d costs d + 1 round trips of latency
//! whenever a level has at most that many members). Each reachable catalog is
//! read once. The rows are then assembled in stable
//! pre-order from the catalogs in memory, so the two read strategies give the
//! same rows, and duplicate ids and cycles are skipped at their later
//! pre-order occurrence. Nothing here loads or resumes an agent.

use crate::core::catalog::{self, CatalogEntry, Mode, Projected};
use crate::core::error::{ErrorCode, Result, SubagentError};
use crate::core::event;
use crate::core::hash::{HashMap, HashSet};
use crate::core::name::{self, AgentName, AgentRef};
use crate::core::signal::Signal;
use crate::core::store::{ReadQuery, ReadResult, Store};
use std::fmt;
use std::rc::Rc;

/// Catalog reads in flight at once within one level (owned by the store's
/// `read_each`, which bounds them).
pub use crate::core::store::MAX_CONCURRENT_READS;

/// Why a branch of the tree could not be shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DiagnosticReason {
    /// The child's catalog holds data that does not decode, or its own
    /// catalog entry does (then the row's `seq` and `detail` say which and why).
    Corrupt,
    /// The child's session is missing or its read failed.
    Unavailable,
    /// The entry's mode is `unknown`: still traversed, never continued.
    Unsupported,
    /// The child's own `session/start` names another creator: the catalog
    /// claims a member of someone else, which is never shown, resumed or written.
    Foreign,
}

impl DiagnosticReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticReason::Corrupt => "corrupt",
            DiagnosticReason::Unavailable => "unavailable",
            DiagnosticReason::Unsupported => "unsupported",
            DiagnosticReason::Foreign => "foreign",
        }
    }
}

/// A listed descendant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildRow {
    pub id: String,
    /// The parent whose catalog holds this child.
    pub parent_id: String,
    /// Edges from the requested root; direct children are 1.
    pub depth: u32,
    pub mode: Mode,
    pub label: Option<String>,
    pub name: Option<AgentName>,
    /// Names from the requested root, when every member on the way is named.
    /// Shared with the parent's row, so a listing's memory stays linear in the tree.
    pub path: Option<FullName>,
    pub has_children: bool,
}

impl ChildRow {
    /// The full name as a string (built on demand: O(depth)).
    pub fn path_string(&self) -> Option<String> {
        self.path.as_ref().map(FullName::to_string)
    }
}

/// A full name from the requested root (`reviewer/checker`), as a link to the
/// parent's full name plus one segment. Cloning is O(1); `to_string` builds
/// the `/`-joined text in O(length). Rows of a listing share their ancestors'
/// links, so a chain of n members costs O(n), not O(n * depth). Nothing here
/// recurses over the depth (dropping, comparing and formatting included).
#[derive(Clone)]
pub struct FullName(Rc<Link>);

struct Link {
    parent: Option<FullName>,
    name: AgentName,
    /// Segments from the requested root (1 for a direct child).
    segments: u32,
    /// Bytes of the joined text.
    len: usize,
}

impl FullName {
    /// `name` below `parent` (`None`: a direct child of the requested root).
    pub fn child(parent: Option<&FullName>, name: AgentName) -> FullName {
        let (segments, len) = match parent {
            None => (1, name.as_str().len()),
            Some(p) => (p.0.segments + 1, p.0.len + 1 + name.as_str().len()),
        };
        FullName(Rc::new(Link { parent: parent.cloned(), name, segments, len }))
    }

    /// The last segment.
    pub fn name(&self) -> &AgentName {
        &self.0.name
    }

    /// The full name one level up (`None` for a direct child of the root).
    pub fn parent(&self) -> Option<&FullName> {
        self.0.parent.as_ref()
    }

    /// Number of segments.
    pub fn segments(&self) -> u32 {
        self.0.segments
    }

    /// Length of the joined text in bytes.
    pub fn len(&self) -> usize {
        self.0.len
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether two full names are the same link (not merely equal text).
    pub fn same(&self, other: &FullName) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }

    /// The segments from the root down.
    pub fn names(&self) -> Vec<&AgentName> {
        let mut out = Vec::with_capacity(self.0.segments as usize);
        let mut at = Some(self);
        while let Some(link) = at {
            out.push(&link.0.name);
            at = link.parent();
        }
        out.reverse();
        out
    }
}

impl fmt::Display for FullName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::with_capacity(self.0.len);
        for (i, name) in self.names().into_iter().enumerate() {
            if i > 0 {
                text.push('/');
            }
            text.push_str(name.as_str());
        }
        f.write_str(&text)
    }
}

impl fmt::Debug for FullName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string(), f)
    }
}

impl PartialEq for FullName {
    fn eq(&self, other: &FullName) -> bool {
        let (mut a, mut b) = (Some(self), Some(other));
        while let (Some(x), Some(y)) = (a, b) {
            if x.same(y) {
                return true;
            }
            if x.0.len != y.0.len || x.0.segments != y.0.segments || x.0.name != y.0.name {
                return false;
            }
            (a, b) = (x.parent(), y.parent());
        }
        a.is_none() && b.is_none()
    }
}

impl Eq for FullName {}

impl PartialEq<str> for FullName {
    fn eq(&self, other: &str) -> bool {
        if self.0.len != other.len() {
            return false;
        }
        // Segment by segment from the end, without building the text.
        let mut rest = other;
        let mut at = Some(self);
        while let Some(link) = at {
            let name = link.0.name.as_str();
            let Some(head) = rest.strip_suffix(name) else { return false };
            at = link.parent();
            rest = match at {
                Some(_) => match head.strip_suffix('/') {
                    Some(head) => head,
                    None => return false,
                },
                None => head,
            };
        }
        rest.is_empty()
    }
}

impl PartialEq<&str> for FullName {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl Drop for Link {
    /// Unlinks the chain iteratively: dropping the last row of a 20,000-deep
    /// chain must not recurse 20,000 frames deep.
    fn drop(&mut self) {
        let mut parent = self.parent.take();
        while let Some(FullName(rc)) = parent {
            match Rc::try_unwrap(rc) {
                Ok(mut link) => parent = link.parent.take(),
                Err(_) => break,
            }
        }
    }
}

/// A branch shown as a diagnostic instead of a child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiagnosticRow {
    /// The child's Session id; empty for a catalog entry whose `childId`
    /// does not read (no Session has the empty id, so it aliases none).
    pub id: String,
    pub parent_id: String,
    pub depth: u32,
    pub reason: DiagnosticReason,
    /// For a catalog entry that does not decode: its event's `seq` in the
    /// parent's log, and why (one sentence).
    pub entry: Option<(u64, String)>,
}

/// The full names of the current row's ancestors while rows are written in
/// listing (pre-order) order, each with what its path was written as (a bridge
/// writes a row's path as its parent's plus `/name`: in JS a rope, so a 20,000-deep
/// chain costs memory linear in the tree, not in the sum of its full names'
/// lengths).
pub struct PathStack<T> {
    stack: Vec<(FullName, T)>,
}

impl<T> Default for PathStack<T> {
    fn default() -> Self {
        PathStack { stack: Vec::new() }
    }
}

impl<T> PathStack<T> {
    /// What the parent of `path` was written as; `None` for a top-level row
    /// or one not listed right under its parent (written whole, O(depth)).
    pub fn base(&mut self, path: &FullName) -> Option<&T> {
        let parent = path.parent()?;
        while let Some((top, _)) = self.stack.last() {
            if parent.same(top) {
                break;
            }
            self.stack.pop();
        }
        self.stack.last().map(|(_, base)| base)
    }

    /// Records what `path` was written as, for its children.
    pub fn push(&mut self, path: &FullName, written: T) {
        self.stack.push((path.clone(), written));
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Row {
    Child(ChildRow),
    Diagnostic(DiagnosticRow),
}

impl Row {
    pub fn id(&self) -> &str {
        match self {
            Row::Child(c) => &c.id,
            Row::Diagnostic(d) => &d.id,
        }
    }
    pub fn parent_id(&self) -> &str {
        match self {
            Row::Child(c) => &c.parent_id,
            Row::Diagnostic(d) => &d.parent_id,
        }
    }
    pub fn depth(&self) -> u32 {
        match self {
            Row::Child(c) => c.depth,
            Row::Diagnostic(d) => d.depth,
        }
    }
}

/// The event types a catalog read needs.
pub const CATALOG_TYPES: &[&str] = &[event::CATALOG, event::SESSION_START];

/// Reads one session's catalog: `None` when the session does not exist.
pub async fn read_catalog(store: &dyn Store, session: &str, signal: &Signal) -> Result<Option<Vec<CatalogEntry>>> {
    Ok(read_catalog_and_creator(store, session, signal).await?.map(|(entries, _)| entries))
}

/// Reads one session's catalog and the creator its own `session/start` names
/// (`parentId`; a fork's inherited start is not its own): `None` when the
/// session does not exist. One read, the same one [`read_catalog`] takes.
pub async fn read_catalog_and_creator(
    store: &dyn Store,
    session: &str,
    signal: &Signal,
) -> Result<Option<(Vec<CatalogEntry>, Option<String>)>> {
    let query = ReadQuery::types(CATALOG_TYPES, signal);
    let Some((entries, start)) = decode_with_creator(signal.guard(store.read(session, &query)).await, &query)? else {
        return Ok(None);
    };
    let entries = entries
        .into_iter()
        .map(|e| e.map_err(|d| SubagentError::new(ErrorCode::CorruptCatalog, d.detail)))
        .collect::<Result<_>>()?;
    Ok(Some((entries, start.creator()?)))
}

/// What a log's own `session/start` says of its creator.
enum Start {
    /// No start (a log written before starts named creators), or one without a creator.
    Unnamed,
    Creator(String),
    /// The start is damaged (see [`event::DAMAGED`]): membership cannot be checked.
    Damaged(String),
}

impl Start {
    fn creator(self) -> Result<Option<String>> {
        match self {
            Start::Unnamed => Ok(None),
            Start::Creator(id) => Ok(Some(id)),
            Start::Damaged(why) => Err(SubagentError::new(ErrorCode::CorruptCatalog, why)),
        }
    }
}

/// The rows a listing gives for the members `ids` (each a child of the one
/// before it, the first a child of `above`, or of the root when `None`), from
/// the catalogs that hold them (`catalogs[i]` holds `ids[i]`), without reading
/// the rest of the tree: as [`list_descendants`] would write them, for a tree
/// that names no Session id twice. `None` when some catalog does not hold the
/// next member, or a listing would not descend to it (an external entry on
/// the way, an id repeated). The last member's own catalog must have decoded
/// (else a listing shows it as a diagnostic): the caller read it. Every
/// row's `has_children` is `false` (a listing knows; a resume needs not).
pub fn chain(root: &str, above: Option<&ChildRow>, ids: &[String], catalogs: &[Vec<CatalogEntry>]) -> Option<Vec<Row>> {
    if ids.len() != catalogs.len() {
        return None;
    }
    let (mut depth, mut path) = match above {
        None => (1, Some(None)),
        Some(row) => (row.depth + 1, row.path.clone().map(Some)),
    };
    let top = above.map_or(root, |row| row.id.as_str());
    let mut parent_id = top.to_owned();
    let mut seen: HashSet<&str> = HashSet::from_iter([root, top]);
    let mut rows = Vec::with_capacity(ids.len());
    for (i, (id, entries)) in ids.iter().zip(catalogs).enumerate() {
        let entry = entries.iter().find(|e| &e.id == id)?;
        if !seen.insert(id) || (i + 1 < ids.len() && entry.mode == Mode::External) {
            return None;
        }
        let here = entry_path(&path, entry);
        rows.push(entry_row(entry, std::mem::replace(&mut parent_id, id.clone()), depth, here.clone()));
        (depth, path) = (depth + 1, here.map(Some));
    }
    Some(rows)
}

fn decode_read(read: ReadResult, query: &ReadQuery) -> Result<Option<Vec<Projected>>> {
    Ok(decode_with_creator(read, query)?.map(|(entries, _)| entries))
}

/// A read's catalog entry by entry and what its own `session/start` says of
/// its creator (a fork's inherited start is not its own).
fn decode_with_creator(read: ReadResult, query: &ReadQuery) -> Result<Option<(Vec<Projected>, Start)>> {
    let Some(mut events) = read? else { return Ok(None) };
    events.retain(|e| query.matches(e));
    let inherited = event::inherited_event_count(&events);
    let own = events.iter().find(|e| e.kind == event::SESSION_START && e.seq == inherited);
    let start = match (own, own.and_then(event::damaged)) {
        (Some(e), Some(why)) => {
            Start::Damaged(format!("event {}: the session/start is damaged in the store: {why}", e.seq))
        }
        (Some(e), None) => match e.payload.get("parentId").and_then(crate::core::json::Value::as_str) {
            Some(id) => Start::Creator(id.to_owned()),
            None => Start::Unnamed,
        },
        (None, _) => Start::Unnamed,
    };
    Ok(Some((catalog::project_each(&events, inherited), start)))
}

/// What became of one child catalog read: its entries and the creator its
/// log names.
enum Outcome {
    Read(Vec<Projected>, Option<String>),
    Failed(DiagnosticReason),
}

fn outcome(read: ReadResult, query: &ReadQuery) -> Outcome {
    match decode_with_creator(read, query).and_then(|r| r.map(|(e, start)| Ok((e, start.creator()?))).transpose()) {
        Ok(Some((entries, creator))) => Outcome::Read(entries, creator),
        Ok(None) => Outcome::Failed(DiagnosticReason::Unavailable),
        Err(e) if e.code == ErrorCode::CorruptCatalog => Outcome::Failed(DiagnosticReason::Corrupt),
        Err(_) => Outcome::Failed(DiagnosticReason::Unavailable),
    }
}

/// A listing as a state machine without I/O: it names the catalogs to read
/// next, takes their reads, and assembles the rows once nothing is left to
/// read. [`list_descendants`] drives it over a [`Store`]; a host can drive it
/// with reads of its own, in any way that hands each level's reads back in
/// the order [`Lister::wants`] names them.
///
/// The first level is the root alone, read with `read`: its failure fails
/// the listing. Every later level is the not-yet-read, non-external children
/// of the level before (each distinct id once), read with one `read_many` or
/// one `read` each: a failed read there only marks its branch. Every read
/// asks for damaged events: a catalog entry that does not decode, at any
/// level, is one `corrupt` row and the rest of its catalog is shown.
pub struct Lister {
    root: String,
    root_entries: Option<Vec<Projected>>,
    catalogs: HashMap<String, Outcome>,
    scheduled: HashSet<String>,
    level: Vec<String>,
    query: ReadQuery,
}

impl Lister {
    pub fn new(root: &str) -> Lister {
        Lister {
            root: root.to_owned(),
            root_entries: None,
            catalogs: HashMap::default(),
            scheduled: HashSet::from_iter([root.to_owned()]),
            level: vec![root.to_owned()],
            query: ReadQuery { damaged: true, ..ReadQuery::types(CATALOG_TYPES, &Signal::new()) },
        }
    }

    /// The sessions whose catalogs to read now (empty once done).
    pub fn wants(&self) -> &[String] {
        &self.level
    }

    /// Whether [`Lister::wants`] is the root alone, whose read must not fail.
    pub fn at_root(&self) -> bool {
        self.root_entries.is_none()
    }

    /// The query every catalog read asks (event types; no signal of its own).
    pub fn query(&self) -> &ReadQuery {
        &self.query
    }

    /// The reads of [`Lister::wants`], in its order. At the root a failed
    /// read is the listing's error (a root with no log
    /// has no descendants); below it each read only decides its branch, and
    /// a batch that failed whole or answered the wrong number of sessions
    /// leaves each branch unavailable.
    pub fn answer(&mut self, reads: Result<Vec<ReadResult>>) -> Result<()> {
        let level = std::mem::take(&mut self.level);
        if self.at_root() {
            let read = match reads.map(<[ReadResult; 1]>::try_from) {
                Ok(Ok([read])) => read,
                Ok(Err(_)) => Err(SubagentError::new(
                    ErrorCode::PersistenceUnavailable,
                    format!(
                        "the read of root session {} must answer one session",
                        name::quote_truncated(&self.root, 100)
                    ),
                )),
                Err(e) => Err(e),
            };
            let entries = decode_read(read, &self.query)?.unwrap_or_default();
            self.schedule_children_of(&entries);
            self.root_entries = Some(entries);
            return Ok(());
        }
        let reads = reads.ok().filter(|r| r.len() == level.len());
        let outcomes: Vec<Outcome> = match reads {
            Some(reads) => reads.into_iter().map(|r| outcome(r, &self.query)).collect(),
            None => level.iter().map(|_| Outcome::Failed(DiagnosticReason::Unavailable)).collect(),
        };
        for (id, outcome) in level.into_iter().zip(outcomes) {
            if let Outcome::Read(entries, _) = &outcome {
                self.schedule_children_of(entries);
            }
            self.catalogs.insert(id, outcome);
        }
        Ok(())
    }

    fn schedule_children_of(&mut self, entries: &[Projected]) {
        for entry in entries.iter().flatten() {
            if entry.mode != Mode::External && self.scheduled.insert(entry.id.clone()) {
                self.level.push(entry.id.clone());
            }
        }
    }

    /// The rows, in stable pre-order (once [`Lister::wants`] is empty).
    pub fn rows(&self) -> Vec<Row> {
        assemble(&self.root, self.root_entries.as_deref().unwrap_or_default(), &self.catalogs)
    }
}

/// Lists every descendant reachable from `root`'s catalog, in stable pre-order.
///
/// The root's own read failing and cancellation reject; a root with no log
/// has no descendants. An entry that does not decode is a `corrupt` row.
pub async fn list_descendants(store: &dyn Store, root: &str, signal: &Signal) -> Result<Vec<Row>> {
    let mut lister = Lister::new(root);
    let query = ReadQuery { signal: signal.clone(), ..lister.query().clone() };
    while !lister.wants().is_empty() {
        let ids = lister.wants().to_vec();
        let reads = read_level(store, &ids, &query, signal, !lister.at_root()).await;
        // Only the caller's abort rejects; a store error that merely carries
        // the CANCELLED code is a failed read of its branch.
        signal.check()?;
        lister.answer(reads)?;
    }
    Ok(lister.rows())
}

/// Pre-order rows from catalogs already read. Iterative: a long chain must
/// not exhaust the (small) wasm stack.
fn assemble(root: &str, root_entries: &[Projected], catalogs: &HashMap<String, Outcome>) -> Vec<Row> {
    struct Frame<'a> {
        entries: &'a [Projected],
        next: usize,
        parent_id: &'a str,
        depth: u32,
        /// `None` below an unnamed member; `Some(None)` at the root.
        path: Option<Option<FullName>>,
    }
    let mut rows = Vec::new();
    let mut seen: HashSet<&str> = HashSet::from_iter([root]);
    let mut stack = vec![Frame { entries: root_entries, next: 0, parent_id: root, depth: 1, path: Some(None) }];
    while let Some(frame) = stack.last_mut() {
        let Some(entry) = frame.entries.get(frame.next) else {
            stack.pop();
            continue;
        };
        frame.next += 1;
        let entry = match entry {
            Ok(entry) => entry,
            // One entry that does not decode is one `corrupt` row; its child is never read.
            Err(damaged) => {
                if damaged.id.as_deref().is_none_or(|id| seen.insert(id)) {
                    rows.push(Row::Diagnostic(DiagnosticRow {
                        id: damaged.id.clone().unwrap_or_default(),
                        parent_id: frame.parent_id.to_owned(),
                        depth: frame.depth,
                        reason: DiagnosticReason::Corrupt,
                        entry: Some((damaged.seq, damaged.detail.clone())),
                    }));
                }
                continue;
            }
        };
        if !seen.insert(&entry.id) {
            continue; // a repeated id or a cycle
        }
        let (parent_id, depth) = (frame.parent_id.to_owned(), frame.depth);
        let path = entry_path(&frame.path, entry);
        let diagnostic = |reason| {
            Row::Diagnostic(DiagnosticRow {
                id: entry.id.clone(),
                parent_id: parent_id.clone(),
                depth,
                reason,
                entry: None,
            })
        };
        let children = match (entry.mode, catalogs.get(&entry.id)) {
            (Mode::External, _) => None,
            // Membership holds both ways: a child whose own log names another creator is not this one's.
            (_, Some(Outcome::Read(_, Some(creator)))) if *creator != parent_id => {
                rows.push(diagnostic(DiagnosticReason::Foreign));
                continue;
            }
            (_, Some(Outcome::Read(children, _))) => Some(children),
            (Mode::Unknown, _) => None,
            (_, Some(Outcome::Failed(reason))) => {
                rows.push(diagnostic(*reason));
                continue;
            }
            (_, None) => {
                rows.push(diagnostic(DiagnosticReason::Unavailable));
                continue;
            }
        };
        rows.push(entry_row(entry, parent_id, depth, path.clone()));
        if let Some(children) = children {
            stack.push(Frame {
                entries: children,
                next: 0,
                parent_id: &entry.id,
                depth: depth + 1,
                path: path.map(Some),
            });
        }
    }
    // A member has children when some row names it as parent (after skips).
    let parents: HashSet<String> = rows.iter().map(|r| r.parent_id().to_owned()).collect();
    for row in &mut rows {
        if let Row::Child(child) = row {
            child.has_children = parents.contains(&child.id);
        }
    }
    rows
}

/// A member's full name below the path of its creator (`None` below an
/// unnamed member, `Some(None)` at the requested root).
fn entry_path(parent: &Option<Option<FullName>>, entry: &CatalogEntry) -> Option<FullName> {
    match (parent, &entry.name) {
        (Some(parent), Some(name)) => Some(FullName::child(parent.as_ref(), name.clone())),
        _ => None,
    }
}

/// The row a listing writes for an entry it can show (an unknown mode is a
/// diagnostic, still traversed); `has_children` is filled in afterwards.
fn entry_row(entry: &CatalogEntry, parent_id: String, depth: u32, path: Option<FullName>) -> Row {
    if entry.mode == Mode::Unknown {
        return Row::Diagnostic(DiagnosticRow {
            id: entry.id.clone(),
            parent_id,
            depth,
            reason: DiagnosticReason::Unsupported,
            entry: None,
        });
    }
    Row::Child(ChildRow {
        id: entry.id.clone(),
        parent_id,
        depth,
        mode: entry.mode,
        label: entry.label.clone(),
        name: entry.name.clone(),
        path,
        has_children: false,
    })
}

/// A resolution as a state machine without I/O: it names the catalog to read
/// next (the root's, then each member's along the path) and takes its read.
/// [`resolve_name`] drives it over a [`Store`].
///
/// When a segment names nobody it goes on as a listing of the whole tree
/// (only a mistake pays for that), which settles what the text was: the
/// Session id of a member after all (a Session id may look like a name), or
/// nobody, refused `UNKNOWN_AGENT` with the closest full names as a hint. So
/// every entry that resolves a name gives one answer for one mistake.
pub struct Resolver {
    root: String,
    text: String,
    segments: Vec<AgentName>,
    /// Segments already found; resolved once all are.
    found: usize,
    current: String,
    query: ReadQuery,
    /// The tree's listing, once a segment named nobody.
    listing: Option<Lister>,
}

impl Resolver {
    /// `lead` is the root and any text that is not a full name is a Session
    /// id: both are resolved at once, reading nothing.
    pub fn new(root: &str, text: &str) -> Resolver {
        let (segments, current) = match AgentRef::parse(text) {
            AgentRef::Lead => (Vec::new(), root.to_owned()),
            AgentRef::Session(id) => (Vec::new(), id),
            AgentRef::Path(segments) => (segments, root.to_owned()),
        };
        let query = ReadQuery { damaged: true, ..ReadQuery::types(CATALOG_TYPES, &Signal::new()) };
        Resolver { root: root.to_owned(), text: text.to_owned(), segments, found: 0, current, query, listing: None }
    }

    /// The sessions whose catalogs to read now (empty once resolved): one
    /// along the path, or a level of the listing.
    pub fn wants(&self) -> &[String] {
        match &self.listing {
            Some(listing) => listing.wants(),
            None if self.found < self.segments.len() => std::slice::from_ref(&self.current),
            None => &[],
        }
    }

    /// Whether [`Resolver::wants`] may be read with one `read_many` (a
    /// listing level below the root).
    pub fn batch(&self) -> bool {
        self.listing.as_ref().is_some_and(|l| !l.at_root())
    }

    /// The query every catalog read asks.
    pub fn query(&self) -> &ReadQuery {
        &self.query
    }

    /// The reads of [`Resolver::wants`], in its order. Along the path a
    /// failed read or a corrupt catalog is the resolution's error and a
    /// missing session an empty catalog; a segment that names nobody (or an
    /// external member with more below it) starts the listing, whose own
    /// failure (the root's read) is the resolution's error: what the text
    /// was cannot be told.
    pub fn answer(&mut self, reads: Result<Vec<ReadResult>>) -> Result<()> {
        if let Some(listing) = &mut self.listing {
            if let Err(e) = listing.answer(reads) {
                self.listing = None;
                return Err(e);
            }
            return if listing.wants().is_empty() { self.conclude() } else { Ok(()) };
        }
        let read = match reads.map(<[ReadResult; 1]>::try_from) {
            Ok(Ok([read])) => read,
            Ok(Err(_)) => Err(SubagentError::new(
                ErrorCode::PersistenceUnavailable,
                format!("the read of session {} must answer one session", name::quote_truncated(&self.current, 100)),
            )),
            Err(e) => Err(e),
        };
        let entries = decode_read(read, &self.query)?.unwrap_or_default();
        let Some(segment) = self.segments.get(self.found) else { return Ok(()) };
        let last = self.found + 1 == self.segments.len();
        // An entry that does not decode names nobody (the listing shows it as a diagnostic).
        match entries.into_iter().flatten().find(|e| e.name.as_ref() == Some(segment)) {
            Some(entry) if last || entry.mode != Mode::External => self.current = entry.id,
            // The root's own Session id, when no child bears it as a name: nothing more to read.
            _ if self.text == self.root => return self.resolve_to_text(),
            _ => {
                self.listing = Some(Lister::new(&self.root));
                return Ok(());
            }
        }
        self.found += 1;
        Ok(())
    }

    /// The listing is read: the text is a member's Session id, or nobody.
    fn conclude(&mut self) -> Result<()> {
        let rows = self.listing.take().map(|l| l.rows()).unwrap_or_default();
        if rows.iter().any(|r| r.id() == self.text) {
            return self.resolve_to_text();
        }
        Err(unknown_agent_among(&self.text, &rows))
    }

    fn resolve_to_text(&mut self) -> Result<()> {
        self.current.clone_from(&self.text);
        self.found = self.segments.len();
        Ok(())
    }

    /// The Session id, once [`Resolver::wants`] is empty.
    pub fn resolved(&self) -> Option<&str> {
        (self.listing.is_none() && self.found == self.segments.len()).then_some(self.current.as_str())
    }
}

/// Resolves a reference within the tree of `root`: `lead` is the root, a full
/// name is looked up through the catalogs along its path, anything else is
/// returned unchanged as a Session id; a mistake is `UNKNOWN_AGENT` with a
/// hint (see [`Resolver`]). Resolution grants no authority.
pub async fn resolve_name(store: &dyn Store, root: &str, text: &str, signal: &Signal) -> Result<String> {
    let mut resolver = Resolver::new(root, text);
    let query = ReadQuery { signal: signal.clone(), ..resolver.query().clone() };
    while !resolver.wants().is_empty() {
        let ids = resolver.wants().to_vec();
        let reads = read_level(store, &ids, &query, signal, resolver.batch()).await;
        signal.check()?;
        resolver.answer(reads)?;
    }
    Ok(resolver.resolved().unwrap_or(root).to_owned())
}

/// The catalogs of one level: one `read_many` when `batch` and the store has
/// it, else one `read` each (up to [`MAX_CONCURRENT_READS`] in flight).
pub(crate) async fn read_level(
    store: &dyn Store,
    ids: &[String],
    query: &ReadQuery,
    signal: &Signal,
    batch: bool,
) -> Result<Vec<ReadResult>> {
    let many = if batch { store.read_many(ids, query) } else { None };
    match many {
        Some(many) => signal.guard(many).await,
        None => crate::core::store::read_each(store, ids, query, signal).await,
    }
}

/// A reference that names nobody.
pub fn unknown_agent(text: &str) -> SubagentError {
    SubagentError::new(
        ErrorCode::UnknownAgent,
        format!("no agent named {} exists in this tree", name::quote_truncated(text, 200)),
    )
}

/// A Session id outside the caller's tree: one refusal whether it is live,
/// cold or absent (ids are authority; another tree's are not the caller's to learn).
pub fn not_a_member(id: &str) -> SubagentError {
    let mut e = SubagentError::new(
        ErrorCode::Unauthorized,
        format!("{} is not a member of this tree", name::quote_truncated(id, 80)),
    );
    // Text that nearly reads as a full name was meant as one; the hint is the caller's own text, mended.
    if let Some(hint) = name_hint(id) {
        e.message = format!("{}; {hint}", e.message);
    }
    e
}

/// How to mend text that is not a full name but was plainly meant as one:
/// upper case (names are lower case), or a leading `lead/` (full names start
/// below the root). `None` for anything else (a Session id, say).
fn name_hint(text: &str) -> Option<String> {
    let reads = |t: &str| !matches!(name::AgentRef::parse(t), name::AgentRef::Session(_));
    if let Some(rest) = text.strip_prefix("lead/").filter(|r| reads(r)) {
        return Some(format!("full names start below lead: did you mean `{rest}`?"));
    }
    // ASCII only: a name is ASCII, and Unicode's case tables would cost the wasm kilobytes.
    let lower = text.to_ascii_lowercase();
    if lower != text {
        let mended = lower.strip_prefix("lead/").filter(|r| reads(r)).unwrap_or(&lower);
        if reads(mended) {
            return Some(format!("names are lower case: did you mean `{mended}`?"));
        }
    }
    None
}

/// [`unknown_agent`] with the full names closest to `text` among a tree's
/// listing rows (and `lead`) as a hint: "did you mean `writer`?".
pub fn unknown_agent_among(text: &str, rows: &[Row]) -> SubagentError {
    let mut names = vec![name::LEAD.to_owned()];
    names.extend(rows.iter().filter_map(|r| match r {
        Row::Child(c) => c.path_string(),
        Row::Diagnostic(_) => None,
    }));
    unknown_agent_with(text, &names)
}

/// [`unknown_agent`] with the full names closest to `text` among `names` as a hint.
pub fn unknown_agent_with(text: &str, names: &[String]) -> SubagentError {
    let mut e = unknown_agent(text);
    let close = closest(text, names);
    if !close.is_empty() {
        let list: Vec<String> = close.iter().map(|n| format!("`{n}`")).collect();
        e.message = format!("{}; did you mean {}?", e.message, list.join(" or "));
    }
    e
}

/// `INVALID_ARGUMENT` for the first field of the object `value` that is not
/// one of `known`, naming it and the closest known one (`what` names the
/// object: "usage has an unknown field \"input_tokens\"; did you mean
/// inputTokens? usage takes ..."); `Ok` for anything that is not an object.
pub fn check_fields(value: &crate::core::json::Value, known: &[&str], what: &str) -> Result<()> {
    let Some(fields) = value.as_object() else { return Ok(()) };
    match fields.iter().find(|(k, _)| !known.contains(&k.as_str())) {
        Some((key, _)) => Err(unknown_key(what, "has an unknown field", key, known)),
        None => Ok(()),
    }
}

/// `INVALID_ARGUMENT` for `key`, which `what` does not take: "{what} {says}
/// \"key\"; did you mean X? {what} takes a, b" (the hint when one is close).
pub fn unknown_key(what: &str, says: &str, key: &str, known: &[&str]) -> SubagentError {
    let names: Vec<String> = known.iter().map(|k| (*k).to_owned()).collect();
    let hint = match closest(key, &names).first() {
        Some(close) => format!("did you mean {close}? "),
        None => String::new(),
    };
    SubagentError::new(
        ErrorCode::InvalidArgument,
        format!("{what} {says} {}; {hint}{what} takes {}", name::quote_truncated(key, 40), known.join(", ")),
    )
}

/// Up to three names closest to `text` (by edit distance, or sharing its last segment).
pub fn closest(text: &str, names: &[String]) -> Vec<String> {
    let last = text.rsplit('/').next().unwrap_or(text);
    let mut scored: Vec<(usize, &String)> = names
        .iter()
        .filter_map(|n| {
            let d = edit_distance(text, n);
            let same_leaf = n.rsplit('/').next() == Some(last);
            let limit = (text.chars().count() / 3).max(2);
            (same_leaf || d <= limit).then_some((if same_leaf { 0 } else { d }, n))
        })
        .collect();
    // The three smallest in (distance, name) order, as a sort would give them,
    // without a sort instance in the wasm.
    let mut closest = Vec::new();
    while closest.len() < 3 {
        let Some(i) = (0..scored.len()).min_by(|&i, &j| scored[i].cmp(&scored[j])) else { break };
        closest.push(scored.swap_remove(i).1.clone());
    }
    closest
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().take(256).enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
