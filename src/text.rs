//! Model-visible text written by the runtime. Every text names members by
//! full name; agents' messages are framed as data from another agent, never
//! as instructions from the user.

use crate::result::{stop, SubagentResult};

/// One line on how a child ended.
pub fn settled_summary(name: &str, stop_reason: &str) -> String {
    match stop_reason {
        stop::COMPLETED => format!("Subagent {name} finished."),
        stop::ABORTED => format!("Subagent {name} was stopped before it finished."),
        stop::ERROR => format!("Subagent {name} failed."),
        stop::MAX_TOKENS => format!("Subagent {name} ran out of output tokens before it finished."),
        stop::REFUSAL => format!("Subagent {name} declined the task."),
        other => format!("Subagent {name} ended ({other})."),
    }
}

/// The settlement notice a creator receives: the summary, the child's closing
/// message or that it left none, then any structured result and diagnostic.
pub fn settled_notice(name: &str, result: &SubagentResult) -> String {
    let mut text = settled_summary(name, &result.stop_reason);
    let closing = result.output_text();
    if closing.trim().is_empty() {
        text.push_str("\nIt left no closing message.");
    } else {
        text.push_str(&format!("\nIts closing message:\n<agent-output from=\"{name}\">\n{closing}\n</agent-output>"));
    }
    if let Some(structured) = &result.structured {
        text.push_str(&format!("\nStructured result: {}", structured.to_json()));
    }
    if let Some(diagnostic) = &result.diagnostic {
        text.push_str(&format!("\nDiagnostic: {diagnostic}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Value;
    use crate::result::text_block;

    #[test]
    fn one_summary_line_per_stop_reason() {
        assert_eq!(settled_summary("reviewer/checker", "completed"), "Subagent reviewer/checker finished.");
        assert_eq!(settled_summary("a", "aborted"), "Subagent a was stopped before it finished.");
        assert_eq!(settled_summary("a", "error"), "Subagent a failed.");
        assert_eq!(settled_summary("a", "max-tokens"), "Subagent a ran out of output tokens before it finished.");
        assert_eq!(settled_summary("a", "refusal"), "Subagent a declined the task.");
        assert_eq!(settled_summary("a", "paused"), "Subagent a ended (paused).");
    }

    #[test]
    fn notices_carry_closing_message_structured_and_diagnostic() {
        let mut r = SubagentResult::new("completed");
        assert_eq!(settled_notice("x", &r), "Subagent x finished.\nIt left no closing message.");
        r.output = Value::Array(vec![text_block("done")]);
        r.structured = Some(Value::object([("ok", Some(Value::Bool(true)))]));
        r.diagnostic = Some("late".into());
        assert_eq!(
            settled_notice("x", &r),
            "Subagent x finished.\nIts closing message:\n<agent-output from=\"x\">\ndone\n</agent-output>\nStructured result: {\"ok\":true}\nDiagnostic: late"
        );
    }
}
