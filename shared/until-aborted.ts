// Gives up waiting on a promise once a signal is aborted, for waits an AbortSignal cannot reach
// itself (a connection being opened, a query already sent, a start that waits its turn).

/**
 * `work`, or the signal's reason (an AbortError unless abort() was given another) as soon as it
 * is aborted; what `work` yields after that goes to `dispose`, and a late failure is dropped.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined, dispose?: (late: T) => void): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      reject(signal.reason);
      work.then((late) => dispose?.(late), () => undefined);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
