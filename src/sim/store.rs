//! A store that delays, fails and hangs at random points over a
//! [`MemoryStore`], and answers late or wrongly the way real stores do: an
//! append that commits and is acknowledged only later (`late_ack`), or that
//! commits and then reports a failure (`lost_ack`: a timeout after the
//! commit); a read whose snapshot is taken when it is issued and handed back
//! only after later appends landed (`stale_read`). The store's contract does
//! not promise atomic appends, so a multi-event batch may also tear
//! (`store.torn`): a strict prefix lands and the call fails, as a store that
//! writes event by event and crashes (or times out) mid-batch would.

use super::ctx::Ctx;
use crate::core::error::{ErrorCode, Result, SubagentError};
use crate::core::event::SessionEvent;
use crate::core::exec::LocalBoxFuture;
use crate::core::store::{ReadQuery, ReadResult, Store};
use std::rc::Rc;

pub struct FaultStore {
    ctx: Rc<Ctx>,
}

impl FaultStore {
    pub fn new(ctx: Rc<Ctx>) -> FaultStore {
        FaultStore { ctx }
    }
}

fn unavailable(what: &str, session: &str) -> SubagentError {
    SubagentError::new(ErrorCode::PersistenceUnavailable, format!("sim: the store failed to {what} {session:?}"))
}

impl FaultStore {
    /// Delays, fails or hangs one call; `Err` means the call fails without effect.
    async fn weather(&self, what: &'static str, session: &str, signal: Option<&crate::Signal>) -> Result<()> {
        let ctx = &self.ctx;
        let rates = &ctx.rates;
        if ctx.fault(rates.store_delay, "store.delay") {
            ctx.delay(ctx.rng.range(1, 12)).await;
        }
        if ctx.hang_fault(rates.store_hang, "store.hang") {
            ctx.hang(signal).await?;
            // A partition that heals answers late, or times out.
            if ctx.rng.chance(0.5) {
                return Err(unavailable(what, session));
            }
        }
        if ctx.fault(rates.store_fail, if what == "append to" { "store.fail_append" } else { "store.fail_read" }) {
            return Err(unavailable(what, session));
        }
        Ok(())
    }
}

impl Store for FaultStore {
    fn append<'a>(&'a self, session: &'a str, events: Vec<SessionEvent>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            self.weather("append to", session, None).await?;
            let ctx = &self.ctx;
            if events.len() > 1 && ctx.fault(ctx.rates.store_fail, "store.torn") {
                let landed = ctx.rng.range(1, events.len() as u64 - 1);
                let start = events.first().map_or(0, |e| e.seq);
                ctx.inner.append_now(session, events.into_iter().take(landed as usize).collect())?;
                ctx.torn.borrow_mut().entry(session.to_owned()).or_insert(start + landed);
                return Err(unavailable("finish the append to", session));
            }
            // Decided, now applied at once: all events or none.
            ctx.inner.append_now(session, events)?;
            if ctx.fault(ctx.rates.store_delay, "store.late_ack") {
                ctx.delay(ctx.rng.range(1, 16)).await;
            }
            if ctx.fault(ctx.rates.store_fail / 2.0, "store.lost_ack") {
                return Err(unavailable("confirm the append to", session));
            }
            Ok(())
        })
    }

    fn read<'a>(&'a self, session: &'a str, query: &'a ReadQuery) -> LocalBoxFuture<'a, ReadResult> {
        Box::pin(async move {
            self.weather("read", session, Some(&query.signal)).await?;
            query.signal.check()?;
            let snapshot = self.ctx.inner.read_now(session, query);
            let ctx = &self.ctx;
            if ctx.fault(ctx.rates.store_delay, "store.stale_read") {
                ctx.delay(ctx.rng.range(1, 16)).await;
            }
            Ok(snapshot)
        })
    }

    fn read_many<'a>(
        &'a self,
        sessions: &'a [String],
        query: &'a ReadQuery,
    ) -> Option<LocalBoxFuture<'a, Result<Vec<ReadResult>>>> {
        // Some calls have no batch read at all, like a minimal host store.
        if !self.ctx.quiet.get() && self.ctx.rng.chance(0.2) {
            return None;
        }
        Some(Box::pin(async move {
            self.weather("batch-read", "(many)", Some(&query.signal)).await?;
            query.signal.check()?;
            Ok(sessions
                .iter()
                .map(|id| {
                    if self.ctx.fault(self.ctx.rates.store_fail, "store.fail_read_one") {
                        Err(unavailable("read", id))
                    } else {
                        Ok(self.ctx.inner.read_now(id, query))
                    }
                })
                .collect())
        }))
    }
}
