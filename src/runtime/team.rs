//! Team tasks: a shared task board per tree, kept as `team/task` events in
//! the root's log. Storage keeps `ownerId` (a Session id); everything shown
//! to a model reports the owner's full name.

use crate::core::error::Result;
use crate::core::event::SessionEvent;
use crate::core::hash::HashMap;
use crate::core::json::Value;

/// The event type of task board changes.
pub const TASK_EVENT: &str = "team/task";

/// Task states.
pub const STATUSES: &[&str] = &["open", "in-progress", "blocked", "completed"];

#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// `task-N`, in creation order.
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub status: String,
    pub owner_id: Option<String>,
    pub result: Option<String>,
    pub created_by: String,
    pub updated_at: u64,
    /// The `seq` of the event that created it in the root's log.
    pub created_seq: u64,
}

/// A change to the board, as stored.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TaskChange {
    pub task_id: String,
    pub create: bool,
    pub title: Option<String>,
    pub description: Option<String>,
    pub status: Option<String>,
    /// `Some(None)` clears the owner.
    pub owner_id: Option<Option<String>>,
    pub result: Option<String>,
    pub by: String,
    pub at: u64,
}

impl TaskChange {
    pub fn to_payload(&self) -> Value {
        let owner = self.owner_id.as_ref().map(|o| o.as_deref().map_or(Value::Null, Value::from));
        Value::object([
            ("op", Some(Value::from(if self.create { "create" } else { "update" }))),
            // A create carries no id: the fold numbers creates in log order, so
            // concurrent creates can never pick the same id.
            ("taskId", (!self.create).then(|| Value::from(self.task_id.as_str()))),
            ("title", self.title.as_deref().map(Value::from)),
            ("description", self.description.as_deref().map(Value::from)),
            ("status", self.status.as_deref().map(Value::from)),
            ("ownerId", owner),
            ("result", self.result.as_deref().map(Value::from)),
            ("by", Some(Value::from(self.by.as_str()))),
            ("at", Some(Value::from(self.at))),
        ])
    }
}

/// Folds the board from the root's `team/task` events; malformed events are
/// skipped. Linear in the events: tasks are found by id through an index, and
/// the first free `task-N` only moves forward (ids are never removed).
pub fn fold(events: &[SessionEvent]) -> Vec<Task> {
    let mut tasks: Vec<Task> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::default();
    let mut free = 1u64; // every `task-N` below it is taken
    for e in events.iter().filter(|e| e.kind == TASK_EVENT) {
        let p = &e.payload;
        let text = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_owned);
        let op = p.get("op").and_then(Value::as_str);
        // Older logs name the id in the create; newer ones leave it to the fold.
        let task_id = match (text("taskId"), op) {
            (Some(id), _) => id,
            (None, Some("create")) => {
                while index.contains_key(&format!("task-{free}")) {
                    free += 1;
                }
                format!("task-{free}")
            }
            (None, _) => continue,
        };
        let at = p.get("at").and_then(Value::as_u64).unwrap_or(0);
        match op {
            Some("create") if !index.contains_key(&task_id) => {
                let Some(title) = text("title") else { continue };
                index.insert(task_id.clone(), tasks.len());
                tasks.push(Task {
                    id: task_id,
                    title,
                    description: text("description"),
                    status: text("status").unwrap_or_else(|| "open".into()),
                    owner_id: text("ownerId"),
                    result: None,
                    created_by: text("by").unwrap_or_default(),
                    updated_at: at,
                    created_seq: e.seq,
                });
            }
            Some("update") => {
                let Some(task) = index.get(&task_id).map(|&i| &mut tasks[i]) else { continue };
                if let Some(title) = text("title") {
                    task.title = title;
                }
                if let Some(d) = text("description") {
                    task.description = Some(d);
                }
                if let Some(s) = text("status").filter(|s| STATUSES.contains(&s.as_str())) {
                    task.status = s;
                }
                match p.get("ownerId") {
                    Some(Value::String(o)) => task.owner_id = Some(o.clone()),
                    Some(Value::Null) => task.owner_id = None,
                    _ => {}
                }
                if let Some(r) = text("result") {
                    task.result = Some(r);
                }
                task.updated_at = at;
            }
            _ => {}
        }
    }
    tasks
}

/// Checks a status string.
pub fn check_status(status: &str) -> Result<()> {
    if STATUSES.contains(&status) {
        Ok(())
    } else {
        Err(crate::err!(
            InvalidArgument,
            "task status {} must be one of {}",
            crate::core::name::quote_truncated(status, 80),
            STATUSES.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(seq: u64, title: &str, id: Option<&str>) -> SessionEvent {
        let mut change =
            TaskChange { create: true, title: Some(title.into()), by: "lead".into(), ..Default::default() };
        let mut payload = change.to_payload();
        if let (Some(id), Value::Object(map)) = (id, &mut payload) {
            change.task_id = id.into();
            map.push(("taskId".into(), Value::from(id)));
        }
        SessionEvent::new(seq, TASK_EVENT, payload)
    }

    #[test]
    fn creates_are_numbered_by_the_fold_so_concurrent_ones_never_collide() {
        // Two creates written by concurrent calls, each without an id: both land.
        let board = fold(&[create(3, "a", None), create(4, "b", None)]);
        let ids: Vec<(&str, u64)> = board.iter().map(|t| (t.id.as_str(), t.created_seq)).collect();
        assert_eq!(ids, [("task-1", 3), ("task-2", 4)]);
        // Older logs named ids in creates: those keep them, and new creates take the next free one.
        let board =
            fold(&[create(0, "old", Some("task-1")), create(1, "old dup", Some("task-1")), create(2, "new", None)]);
        let ids: Vec<&str> = board.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["task-1", "task-2"]);
        // A named id ahead of the count is skipped when the count reaches it.
        let board = fold(&[create(0, "a", None), create(1, "named", Some("task-2")), create(2, "b", None)]);
        let ids: Vec<&str> = board.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["task-1", "task-2", "task-3"]);
    }

    #[test]
    fn updates_find_their_task_and_unknown_ids_are_skipped() {
        let update = |seq: u64, id: &str, status: &str| {
            let change = TaskChange {
                task_id: id.into(),
                status: Some(status.into()),
                by: "lead".into(),
                at: seq,
                ..Default::default()
            };
            SessionEvent::new(seq, TASK_EVENT, change.to_payload())
        };
        let events: Vec<SessionEvent> = (0..2000)
            .map(|i| create(i, "t", None))
            .chain([update(2000, "task-1500", "completed"), update(2001, "task-9999", "completed")])
            .collect();
        let board = fold(&events);
        assert_eq!(board.len(), 2000);
        assert_eq!(board[1499].status, "completed");
        assert_eq!(board[1499].updated_at, 2000);
        assert!(board.iter().filter(|t| t.status == "completed").count() == 1);
    }
}
