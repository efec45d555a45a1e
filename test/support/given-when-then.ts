// Decider tests as given / when / then over events (STYLE.md), with no I/O:
//
//   const spec = deciderSpec(guestInvitesDecider);
//   spec.given([passCreated]).when(revokePass).then([passRevoked]);
//   spec.given([passCreated, passRevoked]).when(revokePass).thenThrows(ConflictError);
import { expect } from 'chai';
import type { Decider, EventShape } from '../../shared/domain/decider.js';
import { fold } from '../../shared/domain/decider.js';

type ErrorClass = abstract new (...args: never[]) => Error;

export interface When<Event, State> {
  /** The command records exactly these events (deep equality, in order); returns them. */
  then(expected: readonly Event[]): Event[];
  /** The command records nothing. */
  thenNothing(): void;
  /** The command throws an instance of `errorClass` (optionally with a matching message); returns it. */
  thenThrows<E extends Error>(errorClass: abstract new (...args: never[]) => E, message?: RegExp): E;
  /** Escape hatch for assertions on the events or the resulting state. */
  thenInspect(check: (events: Event[], stateAfter: State) => void): void;
}

export interface DeciderSpec<Command, Event extends EventShape, State> {
  given(events: readonly Event[]): { when(command: Command): When<Event, State> };
}

export function deciderSpec<Command, Event extends EventShape, State>(
  decider: Decider<Command, Event, State>,
): DeciderSpec<Command, Event, State> {
  return {
    given(history) {
      return {
        when(command) {
          const decide = () => decider.decide(command, fold(decider, history));
          return {
            then(expected) {
              const events = decide();
              expect(events).to.deep.equal(expected);
              return events;
            },
            thenNothing() {
              expect(decide()).to.deep.equal([]);
            },
            thenThrows<E extends Error>(errorClass: abstract new (...args: never[]) => E, message?: RegExp): E {
              let thrown: unknown;
              try {
                decide();
              } catch (error) {
                thrown = error;
              }
              expect(thrown, `expected ${errorClass.name} to be thrown`).to.be.instanceOf(errorClass as ErrorClass);
              if (message) expect((thrown as Error).message).to.match(message);
              return thrown as E;
            },
            thenInspect(check) {
              const events = decide();
              check(events, fold(decider, [...history, ...events]));
            },
          };
        },
      };
    },
  };
}
