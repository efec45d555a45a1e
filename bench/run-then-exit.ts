// How the in-process stack benches end: the stack's pools and servers would keep the process
// alive, so it exits once main is done, stopping the test databases first when main failed.
import { stopTestDatabases } from '../test/support/database.js';

/**
 * Runs main, then exits: with process.exitCode (a bench that missed a check sets it) or 0 when it
 * resolves; 1 when it fails, after stopping the test databases.
 */
export function runThenExit(main: () => Promise<void>): void {
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (error: unknown) => {
      console.error(error);
      void stopTestDatabases().finally(() => process.exit(1));
    },
  );
}
