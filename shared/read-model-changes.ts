/**
 * Which read models a committed projection batch changed: what lets a process cache read-model
 * rows (API keys) and still see a change at once. Heard from an in-process runner directly and
 * from any other process's runner by NOTIFY.
 */
export interface ReadModelChanges {
  /**
   * Calls `listener` with the projections whose rows a committed batch changed, or with null when
   * changes may have been missed (the notification connection was lost). Returns the unsubscribe.
   */
  onRowsChanged(listener: (projections: readonly string[] | null) => void): () => void;
  /** True while every change is heard; a cache must not be filled otherwise. */
  hearsEveryChange(): boolean;
}
