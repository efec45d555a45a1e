/**
 * Gathers the calls made in one event-loop turn and runs them as one: `run` receives every request
 * of the turn and answers each, in order. Concurrent HTTP requests each run in an I/O callback of
 * their own, so batching within a tick would gather one request's calls only; a turn gathers the
 * requests whose callbacks ran together. On a busy server one statement then serves several
 * requests (one round trip, one commit); on an idle one the cost is the rest of the current turn.
 * A failure of the batch fails every call in it.
 */
export function batchPerTurn<Request, Result>(
  run: (requests: Request[]) => Promise<readonly Result[]>,
): (request: Request) => Promise<Result> {
  let pending: Array<{ request: Request; resolve: (result: Result) => void; reject: (error: unknown) => void }> = [];
  return (request) =>
    new Promise<Result>((resolve, reject) => {
      if (pending.push({ request, resolve, reject }) > 1) return;
      setImmediate(() => {
        const calls = pending;
        pending = [];
        run(calls.map((c) => c.request)).then(
          (results) => calls.forEach((c, i) => c.resolve(results[i]!)),
          (error: unknown) => calls.forEach((c) => c.reject(error)),
        );
      });
    });
}
