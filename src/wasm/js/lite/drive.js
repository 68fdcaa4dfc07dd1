// Drives a listing or a resolution of the lite wasm (src/wasm/lite.rs). The
// job names the sessions to read, calls the store, reads every settled answer
// and words every error; this loop only awaits: a level at a time, with one
// readMany or up to `job.maxReads()` reads in flight (issued in order, each
// finished read making room for the next), and it stops waiting once the
// caller's signal aborts, as the full build's async drivers do.

/** Runs `job` to its end: resolves with its result, rejects with its error. */
export async function drive(job) {
  let aborted = false;
  let wake;
  const abort = new Promise((resolve) => {
    wake = resolve;
  });
  const onAbort = () => {
    aborted = true;
    wake();
  };
  let listening = false;
  try {
    listening = job.listen(onAbort);
    for (let ids = job.wants(); ids.length > 0; ids = job.wants()) {
      // An abort during the last answer (a store's data can abort the
      // signal while it is read) issues no more store calls.
      if (aborted) throw job.cancelled();
      const fulfilled = new Uint8Array(ids.length);
      const values = new Array(ids.length);
      const keep = (i, call) =>
        call.then(
          (value) => {
            fulfilled[i] = 1;
            values[i] = value;
          },
          (reason) => {
            values[i] = reason;
          },
        );
      let reads;
      if (job.batch()) {
        reads = keep(0, job.readMany());
      } else {
        let next = 0;
        const reader = async () => {
          while (next < ids.length && !aborted) {
            const i = next++;
            await keep(i, job.read(i));
          }
        };
        const readers = [];
        for (let n = Math.min(job.maxReads(), ids.length); n > 0; n--) readers.push(reader());
        reads = Promise.all(readers);
      }
      await Promise.race([reads, abort]);
      if (aborted) throw job.cancelled();
      job.answer(fulfilled, values);
    }
    return job.result();
  } finally {
    if (listening) job.unlisten(onAbort);
    job.free();
  }
}
