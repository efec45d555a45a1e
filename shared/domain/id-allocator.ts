// Integer ids (organizations, facilities, users, passes) are allocated before the command is
// decided, so events carry them and a replay is deterministic. Gaps are allowed.
export type IdKind = 'organization' | 'facility' | 'user' | 'pass' | 'invitation';

export interface IdAllocator {
  next(kind: IdKind, count?: number): Promise<number[]>;
}
