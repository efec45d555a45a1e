// A decider is three pure functions over plain data (see STYLE.md). Business rules throw DomainError.

export interface EventShape {
  readonly type: string;
  readonly data: unknown;
}

export interface Decider<Command, Event extends EventShape, State> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  /** Returns the events that record the command's outcome, or throws a DomainError. */
  decide(command: Command, state: State): Event[];
}

export function fold<Event extends EventShape, State>(
  decider: Pick<Decider<unknown, Event, State>, 'initialState' | 'evolve'>,
  events: Iterable<Event>,
): State {
  let state = decider.initialState();
  for (const event of events) state = decider.evolve(state, event);
  return state;
}
