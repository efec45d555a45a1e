// Lets the requests of one event-loop turn reach the event store together.
//
// The CommandHandler sends the stream reads asked for within one process.nextTick as one
// readStreams query. Concurrent HTTP requests are parsed in separate I/O callbacks, so each would
// pay a query of its own. Awaiting `eventLoopTurn()` before the handler calls defers them to this
// turn's check phase, where every waiting request resumes in the same microtask drain: their
// reads (one per request, each still asked after its request arrived) go out in one query. The
// cost is at most the rest of the current turn.
let gate: Promise<void> | null = null;

export function eventLoopTurn(): Promise<void> {
  return (gate ??= new Promise<void>((resolve) => {
    setImmediate(() => {
      gate = null;
      resolve();
    });
  }));
}
