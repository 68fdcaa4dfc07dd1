//! Providers that delay, fail and hang at random: a local one whose
//! preparation misbehaves, and an external one whose runs finish after
//! random delays with random stop reasons and whose teardown may fail.
//! Also the spawner that lets a "crashed" runtime's tasks be dropped.

use super::ctx::{text, Ctx, RunState};
use crate::core::error::{ErrorCode, Result, SubagentError};
use crate::core::event::SessionEvent;
use crate::core::exec::{Deferred, LocalBoxFuture, LocalExecutor};
use crate::core::json::Value;
use crate::core::result::{StopReason, SubagentResult};
use crate::core::signal::Signal;
use crate::runtime::ports::{
    Capabilities, ContinuableCreateRequest, ContinuableCreateSpec, Provider, Run, StartRequest,
};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

pub const LOCAL: &str = "sim-local";
pub const EXTERNAL: &str = "sim-ext";

/// Spawns onto the current runtime's executor; once cleared (a crash), new
/// work is dropped and the executor's tasks can be freed.
#[derive(Clone, Default)]
pub struct SimSpawner(pub Rc<RefCell<Option<LocalExecutor>>>);

impl SimSpawner {
    pub fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        let exec = self.0.borrow().clone();
        if let Some(exec) = exec {
            exec.spawn(task);
        }
    }
}

/// A local provider whose preparation delays, fails, hangs until its signal
/// aborts (or the partition heals), or returns a broken seed.
pub struct SimLocal {
    pub ctx: Rc<Ctx>,
}

impl Provider for SimLocal {
    fn name(&self) -> String {
        LOCAL.into()
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { agent_options: true, agent_preset: true, output_schema: true, depth_limit: true }
    }
    fn inherits_parent_context(&self) -> bool {
        false
    }
    fn prepares_continuable(&self) -> bool {
        true
    }
    fn starts_runs(&self) -> bool {
        false
    }
    fn prepare_continuable(
        &self,
        request: ContinuableCreateRequest,
    ) -> LocalBoxFuture<'static, Result<ContinuableCreateSpec>> {
        let ctx = self.ctx.clone();
        Box::pin(async move {
            let rates = &ctx.rates;
            if ctx.fault(rates.prep_delay, "local.delay") {
                ctx.delay(ctx.rng.range(1, 10)).await;
                request.signal.check()?;
            }
            if ctx.hang_fault(rates.prep_hang, "local.hang") {
                ctx.hang(Some(&request.signal)).await?;
            }
            if ctx.fault(rates.prep_fail, "local.fail") {
                return Err(SubagentError::new(ErrorCode::ContinuationUnavailable, "sim: preparation failed"));
            }
            if ctx.fault(rates.prep_fail / 8.0, "local.bad_seed") {
                // Not contiguous from seq 0: the runtime must refuse it.
                return Ok(ContinuableCreateSpec { seed: Some(vec![SessionEvent::new(3, "x", Value::Null)]) });
            }
            Ok(ContinuableCreateSpec::default())
        })
    }
    fn start(&self, _request: StartRequest) -> LocalBoxFuture<'static, Result<Box<dyn Run>>> {
        Box::pin(async { Err(SubagentError::new(ErrorCode::UnsupportedCapability, "sim-local is local only")) })
    }
}

struct SimRun(Rc<RunState>, Rc<Ctx>, SimSpawner);

impl Run for SimRun {
    fn id(&self) -> String {
        self.0.id.clone()
    }
    fn result(&self) -> LocalBoxFuture<'static, Result<SubagentResult>> {
        Box::pin(self.0.result.wait())
    }
    fn dispose(&self) -> LocalBoxFuture<'static, Result<()>> {
        let state = self.0.clone();
        state.disposed.set(state.disposed.get() + 1);
        state.stop.abort();
        if state.late_result {
            let (late, ctx) = (state.clone(), self.1.clone());
            self.2.spawn(Box::pin(async move {
                ctx.delay(ctx.rng.range(1, 20)).await;
                late.result.set(Ok(SubagentResult::new(StopReason::Aborted)));
            }));
        } else {
            state.result.set(Ok(SubagentResult::new(StopReason::Aborted)));
        }
        Box::pin(async move {
            if state.dispose_fails {
                Err(SubagentError::new(ErrorCode::PersistenceUnavailable, format!("sim: run {} leaked", state.id)))
            } else {
                Ok(())
            }
        })
    }
}

/// An external provider: `start` delays, fails or hangs; runs finish after
/// random delays with random stop reasons (or an infrastructure fault), stop
/// when their signal aborts, and sometimes fail to tear down.
pub struct SimExt {
    pub ctx: Rc<Ctx>,
    pub spawner: SimSpawner,
    pub prefix: String,
    pub next: Cell<u64>,
}

static STOPS: [StopReason; 5] =
    [StopReason::Completed, StopReason::Aborted, StopReason::Error, StopReason::MaxTokens, StopReason::Refusal];

/// A random stop reason, mostly `completed`.
pub fn random_stop(ctx: &Ctx) -> &'static StopReason {
    &STOPS[ctx.rng.weighted(&[70, 6, 8, 8, 8])]
}

impl Provider for SimExt {
    fn name(&self) -> String {
        EXTERNAL.into()
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { agent_options: true, agent_preset: true, output_schema: false, depth_limit: false }
    }
    fn inherits_parent_context(&self) -> bool {
        false
    }
    fn prepares_continuable(&self) -> bool {
        false
    }
    fn starts_runs(&self) -> bool {
        true
    }
    fn prepare_continuable(
        &self,
        _request: ContinuableCreateRequest,
    ) -> LocalBoxFuture<'static, Result<ContinuableCreateSpec>> {
        Box::pin(async { Err(SubagentError::new(ErrorCode::UnsupportedCapability, "sim-ext runs externally")) })
    }
    fn start(&self, request: StartRequest) -> LocalBoxFuture<'static, Result<Box<dyn Run>>> {
        self.next.set(self.next.get() + 1);
        let id = format!("{}run-{}", self.prefix, self.next.get());
        let (ctx, spawner) = (self.ctx.clone(), self.spawner.clone());
        Box::pin(async move {
            let rates = &ctx.rates;
            if ctx.fault(rates.prep_delay, "ext.start_delay") {
                ctx.delay(ctx.rng.range(1, 10)).await;
            }
            if ctx.hang_fault(rates.ext_start_hang, "ext.start_hang") {
                ctx.hang(Some(&request.signal)).await?;
            }
            if ctx.fault(rates.ext_start_fail, "ext.start_fail") {
                return Err(SubagentError::new(ErrorCode::ContinuationUnavailable, "sim: the runner refused"));
            }
            let state = Rc::new(RunState {
                id: if ctx.fault(0.01, "ext.empty_id") { String::new() } else { id },
                result: Deferred::new(),
                disposed: Cell::new(0),
                dispose_fails: ctx.fault(rates.ext_dispose_fail, "ext.dispose_fail"),
                late_result: ctx.fault(rates.ext_dispose_fail, "ext.late_result"),
                stop: Signal::new(),
            });
            ctx.runs.borrow_mut().push(state.clone());
            let length = ctx.rng.range(0, 40);
            let error = ctx.fault(rates.ext_run_error, "ext.run_error");
            let reason = random_stop(&ctx);
            let (run, signal, ctx2) = (state.clone(), request.signal.clone(), ctx.clone());
            spawner.spawn(Box::pin(async move {
                for _ in 0..length {
                    if signal.is_aborted() || run.stop.is_aborted() {
                        break;
                    }
                    crate::core::exec::yield_now().await;
                }
                let outcome = if signal.is_aborted() || run.stop.is_aborted() {
                    Ok(SubagentResult::new(StopReason::Aborted))
                } else if error {
                    Err(SubagentError::new(ErrorCode::PersistenceUnavailable, "sim: the runner lost the run"))
                } else {
                    let mut r = SubagentResult::new(reason.clone());
                    r.output = text(&format!("run {} says {reason}", run.id));
                    if *reason != StopReason::Completed {
                        r.diagnostic = Some(format!("sim: {reason}"));
                    }
                    Ok(r)
                };
                ctx2.note(|| format!("run {} finished: {:?}", run.id, outcome.as_ref().map(|r| &r.stop_reason)));
                run.result.set(outcome);
            }));
            Ok(Box::new(SimRun(state, ctx.clone(), spawner.clone())) as Box<dyn Run>)
        })
    }
}
